package dev.muster.bench.etcd;

import dev.muster.bench.support.Metric;
import dev.muster.bench.support.Plan;
import dev.muster.bench.support.SideResult;
import dev.muster.bench.support.Wait;
import dev.muster.cache.CacheConfig;
import dev.muster.cache.EndpointCache;
import dev.muster.cache.EndpointDelta;
import dev.muster.cache.EndpointListener;
import dev.muster.cache.EndpointSet;
import dev.muster.etcd.EtcdConfig;
import dev.muster.etcd.EtcdRegistry;
import dev.muster.registry.Instance;
import dev.muster.registry.RegistrarConfig;
import dev.muster.registry.Registration;
import dev.muster.registry.RegistrationListener;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

/**
 * Muster's register() → visible / close() → gone on one etcd: a provider registry and {@code consumers} consumer
 * registries, each with its own connection and one cache of the service, all in this JVM so the times are one
 * {@link System#nanoTime()} apart. A sample registers one instance, waits until the last consumer's cache has it,
 * closes the registration and waits until the last cache has dropped it.
 *
 * <p>{@link #measureInTurns} drives several rigs in alternating order, so drift in the machine's load falls on
 * every rig alike: Muster next to the raw-jetcd {@link FloorRig} (the end-to-end rows), or Muster on a plain and
 * on a TLS cluster.
 *
 * <p>Not thread-safe: one measuring thread; the caches' listeners mark arrivals from their notifiers (delivery-pool
 * threads).
 */
final class VisibilityRig implements Rig {
  /** Rounds run before the recorded ones (connection and JIT warm-up). */
  static final int WARMUP = 3;
  /** How long a change may take to reach every consumer before the step fails. */
  static final Duration LIMIT = Duration.ofSeconds(15);
  /**
   * Set-up, not measured: the consumer caches' first sets, and how long a register() may keep trying. The suite's
   * integration tests run this on two loaded cores, where both have taken longer than 15 s and the default 10 s.
   */
  static final Duration SETUP_LIMIT = Duration.ofSeconds(60);
  /** Between samples, letting the last one's leftovers (the closed registrar's revoke, its thread) settle. */
  static final Duration PAUSE = Duration.ofMillis(20);

  private final String service;
  private final int consumers;
  private final RegistrarConfig config;
  private final Arrivals added;
  private final Arrivals removed;
  private final List<EtcdRegistry> consumerRegistries = new ArrayList<>();
  private final List<EndpointCache> caches = new ArrayList<>();
  private final EtcdRegistry provider;

  /**
   * One sample, in nanoseconds: until the last consumer saw the change, and until the call itself returned (the
   * raw-jetcd floor records its put and revoke the same way).
   */
  record Sample(long visible, long registerCall, long gone, long closeCall) {
    /** Adds this sample to {@code into} under the {@link Metric} names for {@code consumers} caches. */
    void addTo(SideResult into, int consumers) {
      into.latency(Metric.visible(consumers)).addNanos(visible);
      into.latency(Metric.gone(consumers)).addNanos(gone);
      into.latency(Metric.visibleCall(consumers)).addNanos(registerCall);
      into.latency(Metric.goneCall(consumers)).addNanos(closeCall);
    }
  }

  /** Connects the provider and the consumers to {@code etcd} and waits for every cache's first set. */
  VisibilityRig(EtcdConfig etcd, String service, int consumers, Plan plan) {
    this.service = service;
    this.consumers = consumers;
    this.config = RegistrarConfig.builder().ttl(plan.ttl()).keepaliveInterval(plan.keepalive())
        .drain(Duration.ZERO).shutdownHook(false).startTimeout(SETUP_LIMIT).build();
    this.added = new Arrivals(consumers);
    this.removed = new Arrivals(consumers);
    this.provider = EtcdRegistry.connect(etcd);
    try {
      for (int i = 0; i < consumers; i++) {
        EtcdRegistry r = EtcdRegistry.connect(etcd);
        consumerRegistries.add(r);
        int consumer = i;
        caches.add(r.watch(CacheConfig.builder(service).build(), new EndpointListener() {
          @Override
          public void onChange(EndpointSet set, EndpointDelta delta) {
            delta.added().forEach(in -> added.mark(in.id(), consumer));
            delta.removed().forEach(in -> removed.mark(in.id(), consumer));
          }
        }));
      }
      for (EndpointCache c : caches) {
        Wait.until("the consumer caches' first sets", SETUP_LIMIT, () -> c.awaitReady(Duration.ofSeconds(1)));
      }
    } catch (RuntimeException e) {
      close();
      throw e;
    }
  }

  /**
   * Runs {@link #WARMUP} + {@code samples} rounds; in each, every rig measures one sample, starting with a
   * different rig each round. Rig {@code i}'s recorded samples go to {@code into.get(i)}.
   */
  static void measureInTurns(List<? extends Rig> rigs, List<SideResult> into, int samples) {
    if (rigs.size() != into.size()) {
      throw new IllegalArgumentException(rigs.size() + " rigs but " + into.size() + " results to fill");
    }
    for (int round = 0; round < WARMUP + samples; round++) {
      for (int turn = 0; turn < rigs.size(); turn++) {
        int i = (round + turn) % rigs.size();
        Sample sample = rigs.get(i).measure(round);
        if (round >= WARMUP) {
          sample.addTo(into.get(i), rigs.get(i).consumers());
        }
        Wait.sleep(PAUSE);
      }
    }
  }

  @Override
  public int consumers() {
    return consumers;
  }

  /** Registers and closes instance {@code i{index}}, timing both until the last cache saw the change. */
  @Override
  public Sample measure(int index) {
    String id = "i" + index;
    Instance instance = Instance.of(service, "127.0.0.1", 10_000 + index).id(id);
    long t0 = System.nanoTime();
    Registration registration = provider.register(instance, config, RegistrationListener.NONE);
    long registerCall = System.nanoTime() - t0;
    Wait.until(id + " in " + consumers + " caches", LIMIT, () -> added.allSeenAt(id).isPresent());
    long visible = added.allSeenAt(id).getAsLong() - t0;
    long t1 = System.nanoTime();
    registration.close();
    long closeCall = System.nanoTime() - t1;
    Wait.until(id + " gone from " + consumers + " caches", LIMIT, () -> removed.allSeenAt(id).isPresent());
    long gone = removed.allSeenAt(id).getAsLong() - t1;
    return new Sample(visible, registerCall, gone, closeCall);
  }

  @Override
  public void close() {
    caches.forEach(EndpointCache::close);
    consumerRegistries.forEach(EtcdRegistry::close);
    provider.close();
  }
}
