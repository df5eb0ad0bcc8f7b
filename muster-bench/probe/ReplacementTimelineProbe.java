import dev.muster.cache.CacheConfig;
import dev.muster.cache.EndpointCache;
import dev.muster.etcd.EtcdConfig;
import dev.muster.etcd.EtcdRegistry;
import dev.muster.registry.Instance;
import dev.muster.registry.Registration;
import java.io.File;
import java.io.IOException;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.stream.Stream;

/**
 * When today's client replacements happen in a storm (docs/design-storms.md, open question 2). N caches of one
 * service on one EtcdRegistry (so one connection), a provider on a second registry; etcd SIGKILLed for OUTAGE
 * seconds, then restarted, ROUNDS times. Prints per round the registry's client replacements up to the kill,
 * during the outage (kill until etcd answers /version), and from then until every cache is fresh again, with the
 * time that took. A source-file program, not part of the bench:
 *
 * <pre>
 * java -cp muster-bench/target/muster-bench.jar muster-bench/probe/ReplacementTimelineProbe.java .cache/etcd/default/usr/bin/etcd 2500 5 3
 * </pre>
 * The etcd it starts is killed by its pid, also when the probe fails.
 */
public class ReplacementTimelineProbe {
  public static void main(String[] args) throws Exception {
    if (args.length != 4) {
      System.err.println("usage: ReplacementTimelineProbe ETCD_BIN CACHES OUTAGE_S ROUNDS (e.g. ... 2500 5 3)");
      System.exit(2);
    }
    int caches = Integer.parseInt(args[1]);
    int outageSeconds = Integer.parseInt(args[2]);
    int rounds = Integer.parseInt(args[3]);
    Path data = Files.createTempDirectory("replacement-timeline-probe-");
    int clientPort = freePort();
    int peerPort = freePort();
    String url = "http://127.0.0.1:" + clientPort;
    String peer = "http://127.0.0.1:" + peerPort;
    List<String> command = List.of(args[0], "--name", "m0", "--data-dir", data.resolve("member").toString(),
        "--listen-client-urls", url, "--advertise-client-urls", url, "--listen-peer-urls", peer,
        "--initial-advertise-peer-urls", peer, "--initial-cluster", "m0=" + peer, "--log-level", "error");
    File log = data.resolve("etcd.log").toFile();
    Process etcd = start(command, log);
    try {
      awaitAnswer(url, System.nanoTime(), 15_000);
      try (EtcdRegistry provider = EtcdRegistry.connect(EtcdConfig.of(url));
           EtcdRegistry consumers = EtcdRegistry.connect(EtcdConfig.of(url))) {
        Registration registration = provider.register(Instance.of("probe", "127.0.0.1", 8080));
        CacheConfig config = CacheConfig.builder("probe").build();
        List<EndpointCache> all = new ArrayList<>();
        for (int i = 0; i < caches; i++) {
          all.add(consumers.watch(config));
        }
        long until = System.nanoTime() + 60_000_000_000L;
        while (all.stream().anyMatch(c -> c.isStale() || c.current().size() != 1)) {
          if (System.nanoTime() > until) {
            throw new IllegalStateException("the caches did not see the provider within 60 s");
          }
          Thread.sleep(50);
        }
        System.out.println(version(args[0]) + "; " + caches + " caches of one service on one registry (one"
            + " connection); etcd SIGKILLed for " + outageSeconds + " s; default CacheConfig");
        System.out.println("round  replacements: before the kill / during the outage / after etcd answered"
            + "   every cache fresh (ms after etcd answered)");
        for (int round = 1; round <= rounds; round++) {
          long atKill = consumers.reconnects();
          etcd.destroyForcibly().waitFor(); // SIGKILL, by the pid this probe holds
          Thread.sleep(outageSeconds * 1000L);
          long t0 = System.nanoTime();
          etcd = start(command, log);
          awaitAnswer(url, t0, 30_000);
          long answered = System.nanoTime();
          long atAnswer = consumers.reconnects();
          long limit = answered + 60_000_000_000L;
          while (all.stream().anyMatch(EndpointCache::isStale) && System.nanoTime() < limit) {
            Thread.sleep(10);
          }
          long fresh = System.nanoTime();
          long stale = all.stream().filter(EndpointCache::isStale).count();
          System.out.printf("%5d  %d / %d / %d   %s%n", round, atKill, atAnswer - atKill,
              consumers.reconnects() - atAnswer,
              stale == 0 ? String.valueOf((fresh - answered) / 1_000_000) : stale + " still stale after 60 s");
          Thread.sleep(3000); // let the registration's keepalives settle before the next kill
        }
        registration.close();
      }
    } finally {
      etcd.destroyForcibly().waitFor();
      try (Stream<Path> walk = Files.walk(data)) {
        walk.sorted(Comparator.reverseOrder()).forEach(p -> p.toFile().delete());
      }
    }
  }

  private static void awaitAnswer(String url, long t0, long limitMs) throws InterruptedException {
    HttpClient http = HttpClient.newBuilder().connectTimeout(Duration.ofMillis(50)).build();
    HttpRequest request = HttpRequest.newBuilder(URI.create(url + "/version")).timeout(Duration.ofMillis(50)).build();
    while ((System.nanoTime() - t0) / 1_000_000 < limitMs) {
      try {
        if (http.send(request, HttpResponse.BodyHandlers.discarding()).statusCode() == 200) {
          return;
        }
      } catch (IOException e) {
        // not serving yet
      }
      Thread.sleep(5);
    }
    throw new IllegalStateException("etcd did not answer /version within " + limitMs + " ms");
  }

  private static Process start(List<String> command, File log) throws IOException {
    return new ProcessBuilder(command).redirectErrorStream(true).redirectOutput(ProcessBuilder.Redirect.appendTo(log))
        .start();
  }

  private static String version(String binary) throws IOException, InterruptedException {
    Process p = new ProcessBuilder(binary, "--version").redirectErrorStream(true).start();
    String first = new String(p.getInputStream().readAllBytes()).lines().findFirst().orElse("?");
    p.waitFor();
    return first;
  }

  private static int freePort() throws IOException {
    try (ServerSocket s = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
      return s.getLocalPort();
    }
  }
}
