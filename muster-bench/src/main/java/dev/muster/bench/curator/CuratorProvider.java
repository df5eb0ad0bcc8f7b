package dev.muster.bench.curator;

import dev.muster.bench.support.BenchException;
import dev.muster.bench.support.HelloHttp;
import dev.muster.bench.support.Jvms;
import dev.muster.bench.support.Wait;
import dev.muster.testing.ChildProcess;
import dev.muster.testing.JsonLog;
import java.io.PrintStream;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.function.BooleanSupplier;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.x.discovery.ServiceDiscovery;

/**
 * A provider process for the Curator side: serves {@code GET /hello} on {@code 127.0.0.1:HTTP_PORT}, registers
 * itself with Curator's {@code ServiceDiscovery} (an ephemeral znode, so it lives as long as the ZooKeeper session),
 * prints {@code {"event":"registered","ts":"...","id":"ID"}} on stdout and then waits to be killed.
 *
 * <p>Usage: {@code CuratorProvider CONNECT SERVICE ID HTTP_PORT SESSION_TIMEOUT_MS}. The bench kills it with
 * SIGKILL, so its session ends only when ZooKeeper expires it; on SIGTERM it just exits (no unregister), like a
 * crash that still runs shutdown hooks.
 *
 * <p>Threads: the main thread sets up and then parks; HTTP requests run on a two-thread pool; Curator and the
 * ZooKeeper client run their own threads.
 */
public final class CuratorProvider {
  private CuratorProvider() {}

  public static void main(String[] args) throws Exception {
    if (args.length != 5) {
      System.err.println("usage: CuratorProvider CONNECT SERVICE ID HTTP_PORT SESSION_TIMEOUT_MS");
      System.exit(2);
    }
    String connect = args[0];
    String service = args[1];
    String id = args[2];
    int httpPort = Integer.parseInt(args[3]);
    Duration sessionTimeout = Duration.ofMillis(Long.parseLong(args[4]));

    try {
      HelloHttp.serve(id, httpPort);
      // Never closed: the process ends by SIGKILL (or SIGTERM) with its session still open, which is the point.
      CuratorFramework client = Curators.connected(connect, sessionTimeout);
      ServiceDiscovery<String> discovery = Curators.discovery(client);
      discovery.registerService(Curators.instance(service, id, httpPort));
    } catch (Exception e) {
      // The HTTP server's and Curator's threads would keep the JVM alive; exit so the bench sees the failure now.
      System.err.println("CuratorProvider " + id + ": " + Curators.oneLine(e));
      System.exit(1);
    }

    PrintStream out = System.out;
    out.println(JsonLog.line(JsonLog.entry("registered", Instant.now()).put("id", id)));
    out.flush();

    new CountDownLatch(1).await();
  }

  /** Starts a provider JVM; its log files are {@code dir/NAME.out} and {@code dir/NAME.err}. */
  static ChildProcess launch(Path dir, String name, String connect, String service, String id, int httpPort,
      Duration sessionTimeout) {
    return Jvms.start(dir, name, CuratorProvider.class.getName(), List.of(connect, service, id,
        Integer.toString(httpPort), Long.toString(sessionTimeout.toMillis())));
  }

  /**
   * Waits until {@code jvm} has printed its "registered" line and {@code visible} holds (the instance is in the
   * consumer's cache); fails at once, with its stderr, if the provider exits first.
   */
  static void awaitRegistered(ChildProcess jvm, Duration limit, BooleanSupplier visible) {
    Wait.until(jvm + " registered and visible", limit, () -> {
      if (!jvm.isAlive()) {
        throw new BenchException(jvm + " exited (code " + jvm.exitCode().orElse(-1) + ") before registering: "
            + jvm.stderrTail());
      }
      // The cache first: it is cheap, and the log file is only read once the instance is visible.
      return visible.getAsBoolean() && jvm.json().firstEvent("registered").isPresent();
    });
  }

}
