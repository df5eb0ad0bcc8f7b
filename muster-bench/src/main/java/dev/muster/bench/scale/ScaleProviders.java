package dev.muster.bench.scale;

import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.muster.bench.support.GoSignal;
import dev.muster.etcd.EtcdConfig;
import dev.muster.etcd.EtcdRegistry;
import dev.muster.etcd.internal.NegativeControls;
import dev.muster.registry.Instance;
import dev.muster.registry.RegistrarConfig;
import dev.muster.registry.Registration;
import dev.muster.registry.RegistrationEvent;
import dev.muster.registry.internal.RegistrarControls;
import dev.muster.testing.JsonLog;
import java.io.PrintStream;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicLong;

/**
 * A provider JVM of the scale bench: one {@link EtcdRegistry} registering {@code COUNT} instances with the default
 * TTL and keepalive interval, all at once when the file {@code GO} appears (so that JVM start-up is not in the
 * measured time). It prints JSON lines to stdout:
 * <ul>
 *   <li>{@code connected}: the registry is up, has registered and closed one warm-up instance (of service
 *       {@code SERVICE-warmup}), and waits for {@code GO};
 *   <li>{@code registered}: every {@code register()} has returned, and when the last did (epoch microseconds);
 *   <li>{@code keepalives}, every 5 s: the answer time of each keepalive in the interval (microseconds, from the
 *       registrars' own timing), and the registration events other than keepalives counted so far.
 * </ul>
 *
 * <p>Usage: {@code ScaleProviders ENDPOINTS SERVICE ID_PREFIX COUNT GO [shared]}; {@code shared} registers with
 * {@code RegistrarConfig.sharedLease}, so the JVM's registrations share one lease (granted by the warm-up, before
 * GO). It runs until it is stopped (SIGKILL: the leases then expire in etcd).
 */
public final class ScaleProviders {
  /** How often the keepalive answer times are printed, in microseconds. */
  static final long REPORT_MICROS = 5_000_000;
  /** The optional last argument: register with {@code RegistrarConfig.sharedLease}. */
  static final String SHARED = "shared";

  private ScaleProviders() {}

  public static void main(String[] args) throws Exception {
    if (args.length != 5 && !(args.length == 6 && SHARED.equals(args[5]))) {
      System.err.println("usage: ScaleProviders ENDPOINTS SERVICE ID_PREFIX COUNT GO [shared]");
      System.exit(2);
    }
    boolean shared = args.length == 6;
    PrintStream out = System.out;
    int count = Integer.parseInt(args[3]);
    Path go = Path.of(args[4]);
    RegistrarConfig config = RegistrarConfig.builder().drain(Duration.ZERO).shutdownHook(false)
        .startTimeout(Duration.ofSeconds(60)).sharedLease(shared).build();
    List<Long> answers = new ArrayList<>();
    // Each keepalive's answer time, from the registrar's observer (the lab's control; not in the public event).
    RegistrarControls controls = RegistrarControls.PRODUCTION.withKeepaliveObserver((id, lease, ttl, answeredIn) -> {
      synchronized (answers) {
        answers.add(answeredIn.toNanos() / 1_000);
      }
    });
    AtomicLong unreachable = new AtomicLong();
    AtomicLong reconnected = new AtomicLong();
    AtomicLong lost = new AtomicLong();
    AtomicLong reregistered = new AtomicLong();
    EtcdRegistry registry = EtcdRegistry.connect(EtcdConfig.of(args[0]));
    // One registration first, closed at once: a provider that has been up a while has loaded and compiled this
    // path; the measured registrations should not include a cold JVM's first call.
    Registration warmup = registry.register(Instance.of(args[1] + "-warmup", "127.0.0.1", 19_999)
        .id(args[2] + "warmup"), config, event -> { });
    if (!shared) {
      warmup.close();
    } // with a shared lease the warm-up stays: its lease is the JVM's, live before GO as a ZooKeeper session is

    print(out, JsonLog.entry("connected", Instant.now()).put("count", count));
    GoSignal.awaitThenRegister(go, count, i -> NegativeControls.register(registry,
        Instance.of(args[1], "127.0.0.1", 20_000 + i).id(args[2] + i), config, controls, event -> {
          switch (event.type()) {
            case UNREACHABLE -> unreachable.incrementAndGet();
            case RECONNECTED -> reconnected.incrementAndGet();
            case LEASE_LOST -> lost.incrementAndGet();
            case REREGISTERED -> reregistered.incrementAndGet();
            default -> { }
          }
        }));
    print(out, JsonLog.entry("registered", Instant.now()).put("count", count).put("ts_us", ScaleWatchers.epochMicros()));
    while (true) {
      Thread.sleep(REPORT_MICROS / 1000);
      List<Long> batch;
      synchronized (answers) {
        batch = List.copyOf(answers);
        answers.clear();
      }
      ObjectNode line = JsonLog.entry("keepalives", Instant.now()).put("unreachable", unreachable.get())
          .put("reconnected", reconnected.get()).put("lost", lost.get()).put("reregistered", reregistered.get());
      ArrayNode us = line.putArray("answer_us");
      batch.forEach(us::add);
      print(out, line);
    }
  }

  private static void print(PrintStream out, ObjectNode node) {
    synchronized (out) {
      out.println(JsonLog.line(node));
      out.flush();
    }
  }
}
