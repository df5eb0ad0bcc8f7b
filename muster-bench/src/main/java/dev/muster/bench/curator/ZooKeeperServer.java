package dev.muster.bench.curator;

import dev.muster.bench.support.BenchException;
import dev.muster.bench.support.Jvms;
import dev.muster.bench.support.Wait;
import dev.muster.testing.ChildProcess;
import dev.muster.testing.LoopbackPorts;
import dev.muster.testing.TempDirs;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Optional;

/**
 * A standalone ZooKeeper server in its own JVM ({@code ZooKeeperServerMain} from the bench jar), on a free loopback
 * port, with its data in a temporary directory that {@link #close()} deletes after killing the server by pid.
 *
 * <p>Configuration differs from ZooKeeper's defaults only where the comparison needs it: {@code tickTime=500} so
 * that a 3 s session timeout is allowed (the minimum is 2 ticks) and sessions expire within half a second of it
 * (expiry is checked once per tick); session bounds of 1–10 s; {@code maxClientCnxns=0} (no per-IP limit; the
 * default 60 would refuse the 100 consumer clients, which all come from 127.0.0.1); the admin server off and
 * only the {@code ruok}/{@code srvr} four-letter words on. Everything else stays default, in particular {@code
 * forceSync=yes}: the server fsyncs its transaction log before acknowledging a write, as etcd fsyncs its WAL, so
 * neither side is measured with durability switched off.
 *
 * <p>Thread-safe: immutable after {@link #start(Path)}; {@link #close()} may be called more than once.
 */
public final class ZooKeeperServer implements AutoCloseable {
  private static final Duration START_LIMIT = Duration.ofSeconds(20);

  /** A port picked free can be taken before the server binds it; a fresh port fixes that. */
  private static final int START_ATTEMPTS = 3;

  private static final int SOCKET_TIMEOUT_MS = 500;

  /**
   * The server runs as {@code zkServer.sh} runs it: its default heap, the JVM's default JIT and GC. The providers'
   * fast-start flags (C1 only, serial GC, small heap) trade steady-state speed for start-up time, which is the
   * wrong trade for the server being compared.
   */
  private static final List<String> SERVER_JVM_FLAGS = List.of("-Xmx1000m");

  private static final String VERSION_PREFIX = "Zookeeper version:";

  private final ChildProcess jvm;
  private final Path workDir;
  private final int port;
  private final String version;

  private ZooKeeperServer(ChildProcess jvm, Path workDir, int port, String version) {
    this.jvm = jvm;
    this.workDir = workDir;
    this.port = port;
    this.version = version;
  }

  /**
   * Starts a server whose stdout/stderr go to {@code logDir}; returns once it serves. A server that exits while
   * starting is tried again on another port (up to {@value #START_ATTEMPTS} times); one that neither exits nor
   * serves within {@code START_LIMIT} is a failure at once.
   */
  public static ZooKeeperServer start(Path logDir) {
    String name = "zookeeper";
    for (int attempt = 1; attempt <= START_ATTEMPTS; attempt++) {
      name = attempt == 1 ? "zookeeper" : "zookeeper-" + attempt;
      Optional<ZooKeeperServer> server = startOnce(logDir, name);
      if (server.isPresent()) {
        return server.get();
      }
    }
    throw new BenchException("the ZooKeeper server exited while starting, " + START_ATTEMPTS + " times (last: "
        + logDir.resolve(name + ".err") + ")");
  }

  /** The server once it serves; empty if its JVM exited first (e.g. the port was taken in the meantime). */
  private static Optional<ZooKeeperServer> startOnce(Path logDir, String name) {
    int port = LoopbackPorts.pick();
    Path workDir = createWorkDir(logDir);
    Path cfg = workDir.resolve("zoo.cfg");
    write(cfg, String.join("\n",
        "tickTime=500",
        "dataDir=" + workDir.resolve("data"),
        "clientPort=" + port,
        "clientPortAddress=127.0.0.1",
        "minSessionTimeout=1000",
        "maxSessionTimeout=10000",
        "maxClientCnxns=0",
        "admin.enableServer=false",
        "4lw.commands.whitelist=ruok,srvr,mntr",
        ""));
    ChildProcess jvm = Jvms.start(logDir, name, SERVER_JVM_FLAGS, "org.apache.zookeeper.server.ZooKeeperServerMain",
        List.of(cfg.toString()));
    try {
      Optional<String> version = awaitServing(jvm, port);
      if (version.isEmpty()) {
        TempDirs.delete(workDir);
        return Optional.empty();
      }
      return Optional.of(new ZooKeeperServer(jvm, workDir, port, version.get()));
    } catch (RuntimeException e) {
      jvm.close();
      TempDirs.delete(workDir);
      throw e;
    }
  }

  /**
   * Waits until the server answers {@code ruok} with {@code imok} and {@code srvr} with its version, and returns
   * the version. {@code imok} alone is not enough: a server whose start failed half-way (e.g. it could not write
   * its first snapshot) still says {@code imok} but answers {@code srvr} with "not currently serving requests".
   * Empty if the JVM exits first.
   */
  private static Optional<String> awaitServing(ChildProcess jvm, int port) {
    long deadline = System.nanoTime() + START_LIMIT.toNanos();
    String lastAnswer = "no answer";
    while (true) {
      if (!jvm.isAlive()) {
        return Optional.empty();
      }
      try {
        lastAnswer = fourLetterWord(port, "ruok");
        if ("imok".equals(lastAnswer)) {
          lastAnswer = fourLetterWord(port, "srvr");
          var version = lastAnswer.lines().filter(l -> l.startsWith(VERSION_PREFIX)).findFirst();
          if (version.isPresent()) {
            return Optional.of(version.get().substring(VERSION_PREFIX.length()).trim());
          }
        }
      } catch (UncheckedIOException notYet) {
        // not listening yet
      }
      if (System.nanoTime() - deadline > 0) {
        throw new BenchException("ZooKeeper server on port " + port + " not serving after "
            + START_LIMIT.toSeconds() + " s (last answer: " + lastAnswer.lines().findFirst().orElse("")
            + "): " + jvm.stderrTail());
      }
      Wait.sleep(Duration.ofMillis(100));
    }
  }

  /** Sends a four-letter word and returns everything the server writes back before closing the connection. */
  private static String fourLetterWord(int port, String word) {
    try (Socket s = new Socket()) {
      s.connect(new InetSocketAddress("127.0.0.1", port), SOCKET_TIMEOUT_MS);
      s.setSoTimeout(SOCKET_TIMEOUT_MS);
      s.getOutputStream().write(word.getBytes(StandardCharsets.US_ASCII));
      s.getOutputStream().flush();
      InputStream in = s.getInputStream();
      return new String(in.readAllBytes(), StandardCharsets.US_ASCII).trim();
    } catch (IOException e) {
      throw new UncheckedIOException(word + " to 127.0.0.1:" + port + ": " + e.getMessage(), e);
    }
  }

  private static Path createWorkDir(Path logDir) {
    try {
      return TempDirs.create(logDir, "zookeeper-data-");
    } catch (UncheckedIOException e) {
      throw new BenchException("cannot create a ZooKeeper data directory under " + logDir + ": " + e.getMessage(), e);
    }
  }

  private static void write(Path file, String text) {
    try {
      Files.writeString(file, text);
    } catch (IOException e) {
      throw new BenchException("cannot write " + file + ": " + e.getMessage(), e);
    }
  }

  /**
   * Packets the server has received from clients ({@code zk_packets_received} of {@code mntr}): requests and
   * session pings alike, the scale bench's ZooKeeper counterpart of etcd's keepalive counter.
   */
  public long packetsReceived() {
    String mntr = fourLetterWord(port, "mntr");
    return mntr.lines().filter(l -> l.startsWith("zk_packets_received")).findFirst()
        .map(l -> Long.parseLong(l.substring("zk_packets_received".length()).trim()))
        .orElseThrow(() -> new BenchException("ZooKeeper's mntr has no zk_packets_received: " + mntr));
  }

  /** {@code 127.0.0.1:PORT}, the connect string for Curator. */
  public String connectString() {
    return "127.0.0.1:" + port;
  }

  /** What the server reports in {@code srvr}, e.g. {@code 3.9.5-..., built on ...}. */
  public String version() {
    return version;
  }

  public long pid() {
    return jvm.pid();
  }

  /** Kills the server by pid (SIGKILL: nothing in it is worth a graceful stop) and deletes its data. */
  @Override
  public void close() {
    jvm.close();
    try {
      TempDirs.delete(workDir);
    } catch (UncheckedIOException e) {
      // Still tracked by the reaper, which tries again at JVM exit; not worth failing a finished run for.
    }
  }

  @Override
  public String toString() {
    return "ZooKeeper " + version + " at " + connectString() + " (pid " + jvm.pid() + ")";
  }
}
