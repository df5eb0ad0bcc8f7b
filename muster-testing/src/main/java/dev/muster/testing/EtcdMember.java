package dev.muster.testing;

import dev.muster.testing.internal.EtcdHttp;
import dev.muster.testing.internal.ProcessReaper;
import dev.muster.testing.internal.Signals;
import java.io.IOException;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.OptionalLong;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.function.Predicate;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * One etcd process of an {@link EtcdCluster}: its client URL, its process id, and the faults a test can
 * inflict on it — stop (SIGTERM), kill (SIGKILL), pause/resume (SIGSTOP/SIGCONT) — and a restart on the same
 * data directory, ports and name.
 *
 * <p>Thread-safe: control methods are {@code synchronized} and may block for seconds while a process starts or
 * exits. Every process is tracked by {@link ProcessReaper}, so it dies with the JVM even if nobody calls
 * {@link #kill()}.
 */
public final class EtcdMember {
  /**
   * How long a SIGTERMed member may take to exit. etcd 3.5 waits up to its request timeout (5 s + 2 election
   * timeouts: 7 s by default) for clients' open streams (watches, keepalives) to end, then 1 s for peer traffic: the
   * lab's rolling_upgrade saw up to 8.1 s with clients connected (docs/lab-output.txt). 3.4.23 exits within 0.2 s.
   */
  private static final Duration STOP_GRACE = Duration.ofSeconds(15);
  /** How long a status call may take while the member is awaited. */
  private static final Duration STATUS_TIMEOUT = Duration.ofSeconds(2);
  /** The subdirectory of a member's directory that is etcd's {@code --data-dir}. */
  static final String DATA_DIR = "data";

  private final String name;
  private final int index;
  private final int clientPort;
  private final int peerPort;
  private final Path dataDir;
  private final Path logFile;
  private Path binary;
  private List<String> args = List.of();
  private Process process;
  private boolean paused;
  private volatile String memberId = "";
  private int slowLinesSeen; // log lines slowSinceLastAsked has read
  private final String scheme;

  EtcdMember(String name, int index, int clientPort, int peerPort, Path memberDir, Path binary, boolean tls) {
    this.scheme = tls ? "https" : "http";
    this.name = name;
    this.index = index;
    this.clientPort = clientPort;
    this.peerPort = peerPort;
    this.dataDir = memberDir.resolve(DATA_DIR);
    this.logFile = memberDir.resolve("etcd.log");
    this.binary = binary;
  }

  /** The member's name in the cluster, {@code m0}, {@code m1}, ... */
  public String name() {
    return name;
  }

  /** Position in {@link EtcdCluster#members()}. */
  public int index() {
    return index;
  }

  /** Where clients connect, e.g. {@code http://127.0.0.1:41234} ({@code https} with TLS). Stable across restarts. */
  public URI clientUrl() {
    return URI.create(scheme + "://127.0.0.1:" + clientPort);
  }

  public int clientPort() {
    return clientPort;
  }

  /** Where the other members connect. */
  public URI peerUrl() {
    return URI.create(scheme + "://127.0.0.1:" + peerPort);
  }

  public int peerPort() {
    return peerPort;
  }

  /** The member's data directory (kept across {@link #restart()}). */
  public Path dataDir() {
    return dataDir;
  }

  /** The member's combined stdout/stderr; restarts append to it. */
  public Path logFile() {
    return logFile;
  }

  /** etcd's id for this member (decimal, as the JSON gateway prints it), once it has been seen healthy. */
  public String memberId() {
    return memberId;
  }

  /** The pid of the running process, or empty when the member is not running. */
  public synchronized OptionalLong pid() {
    return isRunning() ? OptionalLong.of(process.pid()) : OptionalLong.empty();
  }

  /** True while the process is alive (paused counts as alive). */
  public synchronized boolean isRunning() {
    return process != null && process.isAlive();
  }

  /** True between {@link #pause()} and {@link #resume()}. */
  public synchronized boolean isPaused() {
    return isRunning() && paused;
  }

  /**
   * Graceful stop: SIGTERM, then SIGKILL if it has not exited after 15 s. A stopped member is a no-op. With clients
   * connected, etcd 3.5 takes about 8 s (see {@link #STOP_GRACE}).
   */
  public synchronized void stop() {
    if (!isRunning()) {
      return;
    }
    process.destroy();
    if (paused) {
      Signals.send(process.pid(), "CONT"); // a stopped process only sees SIGTERM once continued
      paused = false;
    }
    if (!waitForExit(STOP_GRACE)) {
      kill();
    }
    ProcessReaper.forget(process.toHandle());
  }

  /** Crash: SIGKILL, and wait until the process is gone. A stopped member is a no-op. */
  public synchronized void kill() {
    if (process == null) {
      return;
    }
    process.destroyForcibly();
    if (!waitForExit(STOP_GRACE)) {
      throw new EtcdLaunchException("etcd member " + name + " (pid " + process.pid() + ") survived SIGKILL for "
          + STOP_GRACE.toSeconds() + " s");
    }
    paused = false;
    ProcessReaper.forget(process.toHandle());
  }

  /** Freezes the process with SIGSTOP: it keeps its sockets but answers nothing. */
  public synchronized void pause() {
    requireRunning("pause");
    Signals.stop(process.pid());
    paused = true;
  }

  /** Continues a paused process with SIGCONT. */
  public synchronized void resume() {
    requireRunning("resume");
    Signals.send(process.pid(), "CONT");
    paused = false;
  }

  /**
   * Starts the member again on the same data directory, name and ports, and waits until it serves clients
   * ({@code /version} answers). It does not wait for a quorum: use {@link EtcdCluster#awaitHealthy(Duration)}.
   */
  public synchronized void restart(Duration timeout) {
    if (isRunning()) {
      throw new IllegalStateException("etcd member " + name + " is still running (pid " + process.pid()
          + "): stop() or kill() it before restart()");
    }
    spawn();
    awaitAnswering(timeout);
  }

  /** {@link #restart(Duration)} with a 30 s limit. */
  public void restart() {
    restart(Duration.ofSeconds(30));
  }

  /**
   * {@link #restart(Duration)} on another etcd binary, the way an operator upgrades a member: the same data
   * directory, name and ports, the new version's process. etcd takes a data directory of the line before (3.4 to
   * 3.5), not the other way. The member runs {@code binary} from then on, also after later restarts.
   */
  public synchronized void restart(Path binary, Duration timeout) {
    if (isRunning()) {
      throw new IllegalStateException("etcd member " + name + " is still running (pid " + process.pid()
          + "): stop() it before restarting it on " + binary);
    }
    this.binary = java.util.Objects.requireNonNull(binary, "binary");
    restart(timeout);
  }

  /** The etcd binary this member runs (or ran last, or will run at its next start). */
  public synchronized Path binary() {
    return binary;
  }

  /**
   * What the member says of its versions ({@code /version}): its own server version and the cluster's version (the
   * lowest line among the members, {@code 3.4.0} until every member runs 3.5); empty when it does not answer.
   */
  public Optional<Versions> versions() {
    return EtcdHttp.versions(clientUrl(), Duration.ofSeconds(2)).map(v -> new Versions(v.server(), v.cluster()));
  }

  /** A member's server version and its cluster's version, as {@code /version} reports them. */
  public record Versions(String server, String cluster) {}

  /** The last {@code lines} lines of the member's log, for error messages. */
  public String logTail(int lines) {
    try {
      if (!Files.exists(logFile)) {
        return "(no log yet at " + logFile + ")";
      }
      List<String> all = Files.readAllLines(logFile, StandardCharsets.UTF_8);
      return String.join("\n", all.subList(Math.max(0, all.size() - lines), all.size()));
    } catch (IOException e) {
      return "(could not read " + logFile + ": " + e.getMessage() + ")";
    }
  }

  /**
   * What etcd itself logged as slow since the last call: its {@code slow fdatasync} warnings (the disk), its late
   * heartbeats ({@code failed to send out heartbeat on time}: a leader that could not keep up), its ReadIndex
   * retries (a linearizable read that waited past the retry timeout) and its other {@code took too long} warnings
   * (an apply), each as a count with the longest duration the lines give ({@code took}, {@code exceeded-duration} or
   * {@code retry-timeout}); empty when there were none. Lets a test that failed under load say whether etcd saw the
   * stall too.
   */
  public String slowSinceLastAsked() {
    List<String> lines;
    try {
      if (!Files.exists(logFile)) {
        return "";
      }
      lines = Files.readAllLines(logFile, StandardCharsets.UTF_8); // outside the lock: stop, kill, pause take it
    } catch (IOException e) {
      return "";
    }
    List<String> fresh;
    synchronized (this) {
      fresh = lines.subList(Math.min(slowLinesSeen, lines.size()), lines.size());
      slowLinesSeen = lines.size();
    }
    List<String> parts = new ArrayList<>();
    slowSummary(fresh, l -> l.contains("slow fdatasync"), "slow fdatasync", TOOK).ifPresent(parts::add);
    slowSummary(fresh, l -> l.contains(HEARTBEAT), "late heartbeats", EXCEEDED).ifPresent(parts::add);
    slowSummary(fresh, l -> l.contains(READ_INDEX), "ReadIndex retries", RETRY_TIMEOUT).ifPresent(parts::add);
    slowSummary(fresh, l -> l.contains("took too long") && !l.contains(HEARTBEAT) && !l.contains(READ_INDEX),
        "took too long", TOOK).ifPresent(parts::add);
    return String.join(", ", parts);
  }

  private static final String HEARTBEAT = "failed to send out heartbeat on time";
  private static final String READ_INDEX = "waiting for ReadIndex response took too long";
  private static final Pattern TOOK = durationField("took");
  private static final Pattern EXCEEDED = durationField("exceeded-duration");
  private static final Pattern RETRY_TIMEOUT = durationField("retry-timeout");

  private static Pattern durationField(String name) {
    return Pattern.compile("\"" + name + "\":\"([0-9.]+)(ms|s|\u00b5s|us|ns)\"");
  }

  private static Optional<String> slowSummary(List<String> lines, Predicate<String> kind, String label,
      Pattern field) {
    int count = 0;
    double longestMs = -1;
    for (String line : lines) {
      if (!kind.test(line)) {
        continue;
      }
      count++;
      Matcher m = field.matcher(line);
      if (m.find()) {
        double v = Double.parseDouble(m.group(1));
        double ms = switch (m.group(2)) {
          case "s" -> v * 1000;
          case "ms" -> v;
          case "ns" -> v / 1_000_000;
          default -> v / 1000;
        };
        longestMs = Math.max(longestMs, ms);
      }
    }
    if (count == 0) {
      return Optional.empty();
    }
    return Optional.of(count + " " + label + (longestMs < 0 ? "" : String.format(" (longest %.0f ms)", longestMs)));
  }

  /**
   * The first line of the log that reads like the reason for a failure (a fatal or error entry, a flag
   * complaint), trimmed to 300 characters; empty when there is none.
   */
  public String firstProblem() {
    try {
      if (!Files.exists(logFile)) {
        return "";
      }
      for (String line : Files.readAllLines(logFile, StandardCharsets.UTF_8)) {
        if (line.contains("\"level\":\"fatal\"") || line.contains("\"level\":\"error\"")
            || line.contains("flag provided but not defined") || line.startsWith("Error")) {
          return line.length() > 300 ? line.substring(0, 300) + "..." : line;
        }
      }
      return "";
    } catch (IOException e) {
      return "";
    }
  }

  @Override
  public String toString() {
    return name + "@" + clientUrl() + (isRunning() ? " pid " + process.pid() + (paused ? " paused" : "") : " down");
  }

  // ---- used by EtcdCluster -------------------------------------------------------------------------

  synchronized void configure(List<String> etcdArgs) {
    this.args = List.copyOf(etcdArgs);
  }

  synchronized void spawn() {
    List<String> command = new ArrayList<>();
    command.add(binary.toString());
    command.addAll(args);
    ProcessBuilder pb = new ProcessBuilder(Signals.inOwnSession(command)) // so that pause() holds: see inOwnSession
        .redirectErrorStream(true)
        .redirectOutput(ProcessBuilder.Redirect.appendTo(logFile.toFile()));
    pb.environment().keySet().removeIf(k -> k.startsWith("ETCD_")); // the flags are the whole configuration
    try {
      Files.createDirectories(logFile.getParent());
      process = pb.start();
    } catch (IOException e) {
      throw new EtcdLaunchException("could not start " + binary + " for member " + name + ": " + e.getMessage()
          + " (set " + EtcdBinary.ENV + " to the etcd binary)", e);
    }
    paused = false;
    ProcessReaper.track(process.toHandle());
  }

  synchronized boolean hasExited() {
    return process != null && !process.isAlive();
  }

  void learnId(String id) {
    memberId = id;
  }

  /**
   * Waits until the member reports healthy and has told its id, until {@code deadlineNanos} ({@link System#nanoTime})
   * at the latest; fails with its log's tail when it exits or the deadline passes ({@code timeout}: for the message).
   */
  void awaitHealthy(long deadlineNanos, Duration timeout) {
    while (System.nanoTime() < deadlineNanos) {
      if (hasExited()) {
        String why = firstProblem();
        throw new EtcdLaunchException("etcd member " + name + " exited during start (client "
            + clientUrl() + ", data " + dataDir() + ")" + (why.isEmpty() ? "" : ": " + why)
            + "; its log ends:\n" + logTail(15));
      }
      if (EtcdHttp.healthy(clientUrl(), Duration.ofMillis(800))) {
        EtcdHttp.status(clientUrl(), STATUS_TIMEOUT).ifPresent(s -> learnId(s.memberId()));
        if (!memberId().isEmpty()) {
          return;
        }
      }
      sleep(Duration.ofMillis(50));
    }
    throw new EtcdLaunchException("etcd member " + name + " was not healthy within " + timeout.toMillis()
        + " ms (client " + clientUrl() + "); its log ends:\n" + logTail(15));
  }

  /** Whether the member's log so far contains {@code text} (for tests that check what etcd saw). */
  public boolean logSays(String text) {
    try {
      return Files.exists(logFile) && Files.readString(logFile, StandardCharsets.UTF_8).contains(text);
    } catch (IOException e) {
      return false;
    }
  }

  private void awaitAnswering(Duration timeout) {
    long deadline = System.nanoTime() + timeout.toNanos();
    while (System.nanoTime() < deadline) {
      if (hasExited()) {
        throw new EtcdLaunchException("etcd member " + name + " exited with code " + process.exitValue()
            + " right after restart; its log ends:\n" + logTail(15));
      }
      if (EtcdHttp.answers(clientUrl(), Duration.ofMillis(500))) {
        return;
      }
      sleep(Duration.ofMillis(50));
    }
    throw new EtcdLaunchException("etcd member " + name + " did not answer on " + clientUrl() + " within "
        + timeout.toMillis() + " ms after restart; its log ends:\n" + logTail(15));
  }

  private void requireRunning(String action) {
    if (!isRunning()) {
      throw new IllegalStateException("cannot " + action + " etcd member " + name + ": it is not running");
    }
  }

  private boolean waitForExit(Duration limit) {
    try {
      process.onExit().get(limit.toMillis(), TimeUnit.MILLISECONDS);
      return true;
    } catch (TimeoutException e) {
      return false;
    } catch (ExecutionException e) {
      return !process.isAlive();
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      return !process.isAlive();
    }
  }

  static void sleep(Duration d) {
    try {
      Thread.sleep(d.toMillis());
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new EtcdLaunchException("interrupted while waiting for etcd", e);
    }
  }
}
