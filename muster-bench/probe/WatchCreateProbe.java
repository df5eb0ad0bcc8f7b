import io.etcd.jetcd.ByteSequence;
import io.etcd.jetcd.Client;
import io.etcd.jetcd.Watch;
import io.etcd.jetcd.options.WatchOption;
import io.etcd.jetcd.watch.WatchResponse;
import java.io.File;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Comparator;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;

/**
 * What a watch create does in the gap between a restarted etcd accepting TCP and it serving (docs/design-storms.md,
 * open question 1). Per run: one member with KEYS keys is SIGKILLed and restarted on its data; the moment its
 * client port accepts TCP, two watches are opened on the prefix: one on a client built then, with EtcdConnection's
 * settings (waitForReady false, the 5 s connect timeout), and one on the client that was connected before the kill.
 * Prints, in ms from the restart: the TCP accept, etcd's first answer to GET /version (polled every 5 ms), and when
 * each watch was created or failed (with its status). A source-file program, not part of the bench:
 *
 * <pre>
 * java -cp muster-bench/target/muster-bench.jar muster-bench/probe/WatchCreateProbe.java .cache/etcd/default/usr/bin/etcd 10000 5
 * </pre>
 * Every etcd it starts is killed by its pid, also when the probe fails. It starts etcd itself rather than through
 * muster-testing's EtcdMember, whose restart() returns only once the member answers: the probe must act at the
 * moment the port accepts, before that.
 */
public class WatchCreateProbe {
  private static ByteSequence bytes(String s) {
    return ByteSequence.from(s, StandardCharsets.UTF_8);
  }

  public static void main(String[] args) throws Exception {
    if (args.length != 3) {
      System.err.println("usage: WatchCreateProbe ETCD_BIN KEYS RUNS (e.g. .cache/etcd/default/usr/bin/etcd 10000 5)");
      System.exit(2);
    }
    String binary = args[0];
    int keys = Integer.parseInt(args[1]);
    int runs = Integer.parseInt(args[2]);
    Path data = Files.createTempDirectory("watch-create-probe-");
    int clientPort = freePort();
    int peerPort = freePort();
    String url = "http://127.0.0.1:" + clientPort;
    String peer = "http://127.0.0.1:" + peerPort;
    List<String> command = List.of(binary, "--name", "m0", "--data-dir", data.resolve("member").toString(),
        "--listen-client-urls", url, "--advertise-client-urls", url, "--listen-peer-urls", peer,
        "--initial-advertise-peer-urls", peer, "--initial-cluster", "m0=" + peer, "--log-level", "error");
    File log = data.resolve("etcd.log").toFile();
    Process etcd = start(command, log);
    Client before = null;
    try {
      before = connected(url);
      awaitAnswer(url, System.nanoTime(), 15_000);
      for (int i = 0; i < keys; i++) {
        before.getKVClient().put(bytes(String.format("/muster/probe/svc/v1/i%06d", i)), bytes("x".repeat(200)))
            .get(10, TimeUnit.SECONDS);
      }
      System.out.println(version(binary) + "; " + keys + " keys of 200 B; one member; ms from the restart:");
      System.out.println("run  tcp-accept  /version  fresh client's watch  old client's watch");
      for (int run = 1; run <= runs; run++) {
        etcd.destroyForcibly().waitFor(); // SIGKILL, by the pid this probe holds
        Thread.sleep(500);
        long t0 = System.nanoTime();
        etcd = start(command, log);
        while (!accepts(clientPort)) {
          Thread.sleep(2);
          if (ms(t0) > 15_000) {
            throw new IllegalStateException("etcd did not accept within 15 s: see " + log);
          }
        }
        double accepted = ms(t0);
        Client fresh = connected(url);
        CompletableFuture<String> freshWatch = watch(fresh, t0);
        CompletableFuture<String> oldWatch = watch(before, t0);
        double answered = awaitAnswer(url, t0, 15_000);
        String f = freshWatch.completeOnTimeout("none within 10 s", 10, TimeUnit.SECONDS).get();
        String o = oldWatch.completeOnTimeout("none within 10 s", 10, TimeUnit.SECONDS).get();
        System.out.printf("%3d  %10.0f  %8.0f  %s  %s%n", run, accepted, answered, f, o);
        fresh.close();
      }
    } finally {
      if (before != null) {
        before.close();
      }
      etcd.destroyForcibly().waitFor();
      try (Stream<Path> walk = Files.walk(data)) {
        walk.sorted(Comparator.reverseOrder()).forEach(p -> p.toFile().delete());
      }
    }
  }

  /** EtcdConnection's settings (its build()), with the CLI's default 5 s request timeout. */
  private static Client connected(String url) {
    Duration timeout = Duration.ofSeconds(5);
    return Client.builder().endpoints(URI.create(url)).waitForReady(false).connectTimeout(timeout)
        .retryMaxAttempts(1).retryDelay(50).retryMaxDuration(timeout)
        .keepaliveTime(Duration.ofSeconds(10)).keepaliveTimeout(Duration.ofSeconds(5)).build();
  }

  /** Completes with "created at T ms" or "failed at T ms (STATUS)", whichever comes first. */
  private static CompletableFuture<String> watch(Client client, long t0) {
    CompletableFuture<String> outcome = new CompletableFuture<>();
    Watch.Listener listener = new Watch.Listener() {
      @Override
      public void onNext(WatchResponse response) {
        outcome.complete(String.format("created at %.0f", ms(t0)));
      }

      @Override
      public void onError(Throwable error) {
        outcome.complete(String.format("failed at %.0f (%s)", ms(t0), error.getMessage()));
      }

      @Override
      public void onCompleted() {
        outcome.complete(String.format("completed at %.0f", ms(t0)));
      }
    };
    // the options of EtcdCacheIo.watch (a prefix, created and progress notifications, requireLeader)
    WatchOption option = WatchOption.builder().isPrefix(true).withCreateNotify(true).withProgressNotify(true)
        .withRequireLeader(true).build();
    try {
      client.getWatchClient().watch(bytes("/muster/probe/"), option, listener);
    } catch (RuntimeException e) {
      outcome.complete(String.format("threw at %.0f (%s)", ms(t0), e));
    }
    return outcome;
  }

  private static double awaitAnswer(String url, long t0, long limitMs) throws InterruptedException {
    HttpClient http = HttpClient.newBuilder().connectTimeout(Duration.ofMillis(50)).build();
    HttpRequest request = HttpRequest.newBuilder(URI.create(url + "/version")).timeout(Duration.ofMillis(50)).build();
    while (ms(t0) < limitMs) {
      try {
        if (http.send(request, HttpResponse.BodyHandlers.discarding()).statusCode() == 200) {
          return ms(t0);
        }
      } catch (IOException e) {
        // not serving yet
      }
      Thread.sleep(5);
    }
    throw new IllegalStateException("etcd did not answer /version within " + limitMs + " ms");
  }

  private static boolean accepts(int port) {
    try (Socket s = new Socket()) {
      s.connect(new InetSocketAddress("127.0.0.1", port), 50);
      return true;
    } catch (IOException e) {
      return false;
    }
  }

  private static Process start(List<String> command, File log) throws IOException {
    return new ProcessBuilder(command).redirectErrorStream(true).redirectOutput(ProcessBuilder.Redirect.appendTo(log))
        .start();
  }

  private static String version(String binary) throws IOException, InterruptedException {
    Process p = new ProcessBuilder(binary, "--version").redirectErrorStream(true).start();
    String first = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8).lines().findFirst().orElse("?");
    p.waitFor();
    return first;
  }

  private static int freePort() throws IOException {
    try (ServerSocket s = new ServerSocket(0, 1, java.net.InetAddress.getLoopbackAddress())) {
      return s.getLocalPort();
    }
  }

  private static double ms(long t0) {
    return (System.nanoTime() - t0) / 1e6;
  }
}
