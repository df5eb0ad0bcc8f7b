package dev.muster.bench.curator;

import dev.muster.bench.support.GoSignal;
import dev.muster.testing.JsonLog;
import java.io.PrintStream;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.x.discovery.ServiceDiscovery;

/**
 * The Curator side of the scale bench's providers: {@code COUNT} providers, each its own {@code CuratorFramework}
 * (its own ZooKeeper session, as a provider process has), each registering one instance (an ephemeral znode) when
 * the file {@code GO} appears. It prints {@code connected} once every session is up (and one warm-up instance was
 * registered and removed), and {@code registered} with the epoch µs when the last registration returned.
 *
 * <p>Usage: {@code CuratorSessions CONNECT SERVICE ID_PREFIX COUNT GO SESSION_TIMEOUT_MS}. It runs until stopped.
 */
public final class CuratorSessions {
  private CuratorSessions() {}

  public static void main(String[] args) throws Exception {
    if (args.length != 6) {
      System.err.println("usage: CuratorSessions CONNECT SERVICE ID_PREFIX COUNT GO SESSION_TIMEOUT_MS");
      System.exit(2);
    }
    PrintStream out = System.out;
    int count = Integer.parseInt(args[3]);
    Path go = Path.of(args[4]);
    Duration session = Duration.ofMillis(Long.parseLong(args[5]));
    List<CuratorFramework> clients = new ArrayList<>();
    for (int i = 0; i < count; i++) {
      clients.add(Curators.client(args[0], session));
    }
    List<ServiceDiscovery<String>> discoveries = new ArrayList<>();
    for (CuratorFramework c : clients) {
      Curators.awaitConnected(c);
      discoveries.add(Curators.discovery(c));
    }
    var warm = Curators.instance(args[1] + "-warmup", args[2] + "warmup", 19_999);
    discoveries.get(0).registerService(warm);
    discoveries.get(0).unregisterService(warm);
    print(out, JsonLog.entry("connected", Instant.now()).put("count", count));
    GoSignal.awaitThenRegister(go, count, i -> discoveries.get(i).registerService(
        Curators.instance(args[1], args[2] + i, 20_000 + i)));
    Instant now = Instant.now();
    print(out, JsonLog.entry("registered", now).put("count", count)
        .put("ts_us", now.getEpochSecond() * 1_000_000 + now.getNano() / 1_000));
    Thread.currentThread().join();
  }

  private static void print(PrintStream out, com.fasterxml.jackson.databind.node.ObjectNode node) {
    synchronized (out) {
      out.println(JsonLog.line(node));
      out.flush();
    }
  }
}
