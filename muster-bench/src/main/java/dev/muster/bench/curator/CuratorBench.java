package dev.muster.bench.curator;

import dev.muster.bench.support.Plan;
import dev.muster.bench.support.SideResult;
import java.io.PrintStream;
import java.nio.file.Path;
import java.util.UUID;

/**
 * The Curator side of the side-by-side: Apache Curator's service discovery ({@code curator-x-discovery}: {@code
 * ServiceDiscovery}, {@code ServiceCache}, {@code ServiceProvider} with a {@code DownInstancePolicy}) on a real
 * ZooKeeper server process, doing the same work as the Muster side and recording it under the same {@code Metric}
 * names. Every Curator session uses {@code plan.ttl()} as its timeout, the counterpart of Muster's lease TTL.
 *
 * <ol>
 *   <li>{@link VisibilityRun}: register → visible and unregister → gone in 1, 10, 100 consumer caches;
 *   <li>{@link KillRun}: kill -9 of a provider process → gone from a consumer cache;
 *   <li>{@link BulkRun}: building a cache of 10,000 instances, and the heap it retains per instance;
 *   <li>{@link CallRun}: calls that fail as a caller sees them while a provider is killed.
 * </ol>
 *
 * <p>A step that fails is recorded with {@link SideResult#failed} and the next step still runs. Not
 * thread-safe: {@link #run} uses the calling thread for all measuring and stops everything it started (the server,
 * provider JVMs by pid, every client) before it returns.
 */
public final class CuratorBench {
  private CuratorBench() {}

  /**
   * Runs every Curator measurement of {@code plan}; child JVM logs and ZooKeeper's data go under {@code dir}
   * (the data is deleted at the end), one progress line per step goes to {@code progress}.
   */
  public static SideResult run(Plan plan, Path dir, PrintStream progress) {
    SideResult result = new SideResult();
    long start = System.nanoTime();
    progress.println("curator: starting a ZooKeeper server...");
    ZooKeeperServer server;
    try {
      server = ZooKeeperServer.start(dir);
    } catch (RuntimeException e) {
      result.failed("zookeeper", Curators.oneLine(e));
      return result;
    }
    try (server) {
      result.note("zookeeper: " + server.version() + ", standalone, tickTime 500 ms, forceSync on; Curator "
          + curatorVersion() + " curator-x-discovery");
      String connect = server.connectString();
      step(result, "register→visible", () -> new VisibilityRun(plan, connect, result, progress).run());
      step(result, "kill9→gone", () -> new KillRun(plan, connect, dir, result, progress).run());
      step(result, "build", () -> new BulkRun(plan, connect, result, progress).run());
      step(result, "calls during kill -9", () -> new CallRun(plan, connect, dir, result, progress).run());
    }
    progress.printf("curator: done in %.1f s%n", (System.nanoTime() - start) / 1e9);
    return result;
  }

  /** Each run notes its own failures; this catches what escapes one, so the next still runs. */
  private static void step(SideResult result, String name, Runnable step) {
    try {
      step.run();
    } catch (RuntimeException e) {
      result.failed(name, Curators.oneLine(e));
    }
  }

  /** What the side-by-side table calls this side. */
  public static String label(Plan plan) {
    String curator = curatorVersion();
    String zookeeper = org.apache.zookeeper.Version.getFullVersion().split("[- ]")[0];
    return "Curator " + (curator == null ? "" : curator + " ") + "curator-x-discovery on ZooKeeper " + zookeeper
        + " (session timeout " + plan.ttl().toSeconds() + " s = Muster's TTL)";
  }

  /** From the pom.properties Maven put in Curator's jar (the bench jar keeps it); null if missing. */
  private static String curatorVersion() {
    try (var in = CuratorBench.class.getResourceAsStream(
        "/META-INF/maven/org.apache.curator/curator-x-discovery/pom.properties")) {
      if (in == null) {
        return null;
      }
      java.util.Properties p = new java.util.Properties();
      p.load(in);
      return p.getProperty("version");
    } catch (java.io.IOException e) {
      return null;
    }
  }

  /** A service name no earlier measurement (or earlier run on the same server) has used. */
  static String freshService(String purpose) {
    return purpose + "-" + UUID.randomUUID().toString().substring(0, 8);
  }
}
