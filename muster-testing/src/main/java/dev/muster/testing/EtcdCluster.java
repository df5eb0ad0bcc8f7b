package dev.muster.testing;

import dev.muster.testing.internal.EtcdHttp;
import dev.muster.testing.internal.LoadAverage;
import dev.muster.testing.internal.PemSsl;
import dev.muster.testing.internal.ProcessReaper;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.URI;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.nio.file.attribute.PosixFilePermissions;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Objects;
import java.util.Optional;
import java.util.UUID;
import java.util.stream.Collectors;
import org.junit.jupiter.api.extension.AfterAllCallback;
import org.junit.jupiter.api.extension.AfterEachCallback;
import org.junit.jupiter.api.extension.BeforeAllCallback;
import org.junit.jupiter.api.extension.BeforeEachCallback;
import org.junit.jupiter.api.extension.ExtensionContext;

/*
 * Longer than our 500-line guide by its public nested Builder (about 120 lines of documented settings): it stays
 * nested so that EtcdCluster.builder() and EtcdCluster.Builder read as they do in the lab, the chaos checker, the
 * command line and every test. Without it the class is under 450 lines; the directory and its ports are
 * ClusterDirectory, a member's etcd flags MemberFlags, a member's health wait EtcdMember.awaitHealthy.
 */
/**
 * A private etcd cluster (1 to 9 members) of real {@code etcd} processes on loopback ports, each member with
 * its own data directory. Used by Muster's tests, by the lab, by {@code muster etcd}, and by users' own tests:
 *
 * <pre>{@code
 * @RegisterExtension
 * static EtcdCluster etcd = EtcdCluster.builder().members(3).build();
 * }</pre>
 *
 * <p>As a JUnit 5 extension on a static field it starts before the class's first test and stops after its
 * last; on an instance field, around each test. Before each test, members a previous test stopped, killed or
 * paused are brought back and the cluster is healthy again (disable with {@link Builder#healBetweenTests}).
 * Outside JUnit, call {@link #start()} and {@link #close()}.
 *
 * <p>{@link #start()} returns once every member reports healthy; when one never does, every process already
 * started is killed, temporary directories are removed, and an {@link EtcdLaunchException} names the member
 * and shows its log tail. Processes are killed by pid on {@link #close()} and on JVM shutdown.
 *
 * <p>Thread-safe: control methods are {@code synchronized} and may block for seconds.
 */
public final class EtcdCluster implements AutoCloseable, BeforeAllCallback, AfterAllCallback,
    BeforeEachCallback, AfterEachCallback {

  private static final Duration CALL_TIMEOUT = Duration.ofSeconds(2);
  private static final int PORT_ATTEMPTS = 3;

  private final Builder config;
  private final List<EtcdMember> members = new ArrayList<>();
  /** Where the members' data and logs are; null before the first start and once a temporary one is removed. */
  private ClusterDirectory dir;
  private boolean started;
  private boolean startedForOneTest;

  private EtcdCluster(Builder config) {
    this.config = config;
  }

  public static Builder builder() {
    return new Builder();
  }

  /** Starts every member and waits until all are healthy. Calling it on a started cluster is a no-op. */
  public synchronized EtcdCluster start() {
    if (started) {
      return this;
    }
    Path binary = config.binary != null ? config.binary : EtcdBinary.locate();
    dir = ClusterDirectory.prepare(config.dataDir);
    EtcdLaunchException last = null;
    for (int attempt = 1; attempt <= PORT_ATTEMPTS; attempt++) {
      try {
        launch(binary, attempt);
        started = true;
        return this;
      } catch (PortTakenException e) {
        last = e.failure;
        destroyMembers();
      } catch (RuntimeException e) {
        destroyMembers();
        removeBaseDirIfOwned();
        throw e;
      }
    }
    removeBaseDirIfOwned();
    throw last;
  }

  /** Stops every member (SIGTERM, then SIGKILL) and removes the temporary directories. Idempotent. */
  @Override
  public synchronized void close() {
    RuntimeException failure = null;
    for (EtcdMember m : members) {
      try {
        m.stop();
      } catch (RuntimeException e) {
        m.kill();
        failure = e;
      }
    }
    members.clear();
    removeBaseDirIfOwned();
    started = false;
    if (failure != null) {
      throw failure;
    }
  }

  /** The members, in order {@code m0, m1, ...}. */
  public synchronized List<EtcdMember> members() {
    return Collections.unmodifiableList(new ArrayList<>(members));
  }

  public synchronized EtcdMember member(int index) {
    return members.get(index);
  }

  /**
   * Where member {@code index} ({@code m0}, {@code m1}, ...) of a cluster kept in {@code dataDir} ({@link
   * Builder#dataDir}) has etcd's data directory: {@code dataDir/m<index>/data}. Filled before the first start, e.g.
   * by {@code etcdctl snapshot restore --name m0 --data-dir} this path, it makes a one-member cluster start on the
   * restored data: etcd then takes the membership from the data and not from the launcher's flags.
   */
  public static Path memberDataDir(Path dataDir, int index) {
    return dataDir.resolve("m" + index).resolve(EtcdMember.DATA_DIR);
  }

  /** Every member's client URL. */
  public synchronized List<URI> endpoints() {
    return members.stream().map(EtcdMember::clientUrl).toList();
  }

  /** The certificates the members serve and trust, when the cluster runs with {@link Builder#tls}. */
  public Optional<TestPki> pki() {
    return Optional.ofNullable(config.pki);
  }

  /** Every member's client URL, comma-separated: the value for {@code --endpoints}. */
  public String endpointsString() {
    return endpoints().stream().map(URI::toString).collect(Collectors.joining(","));
  }

  /** The directory holding every member's data and log. */
  public synchronized Path baseDir() {
    return dir == null ? null : dir.path();
  }

  /** The current leader as seen by the running members, or empty when there is none right now. */
  public synchronized Optional<EtcdMember> leader() {
    for (EtcdMember m : members) {
      if (!m.isRunning() || m.isPaused()) {
        continue;
      }
      Optional<EtcdHttp.Status> status = EtcdHttp.status(m.clientUrl(), CALL_TIMEOUT);
      if (status.isPresent() && !status.get().leaderId().isEmpty() && !"0".equals(status.get().leaderId())) {
        String leaderId = status.get().leaderId();
        return members.stream().filter(x -> leaderId.equals(x.memberId()) && x.isRunning()).findFirst();
      }
    }
    return Optional.empty();
  }

  /** Waits until some running member is leader. */
  public EtcdMember awaitLeader(Duration timeout) {
    long deadline = System.nanoTime() + timeout.toNanos();
    while (System.nanoTime() < deadline) {
      Optional<EtcdMember> leader = leader();
      if (leader.isPresent()) {
        return leader.get();
      }
      EtcdMember.sleep(Duration.ofMillis(100));
    }
    throw new EtcdLaunchException("no etcd leader within " + timeout.toMillis() + " ms; members: " + members());
  }

  /** SIGKILLs the current leader and returns it. */
  public synchronized EtcdMember killLeader() {
    EtcdMember leader = awaitLeader(Duration.ofSeconds(10));
    leader.kill();
    return leader;
  }

  /**
   * SIGKILLs a majority ({@code n/2 + 1}) of the running members, highest index first, so {@code m0} is the
   * last to go. Returns the killed members.
   */
  public synchronized List<EtcdMember> killMajority() {
    int majority = members.size() / 2 + 1;
    List<EtcdMember> killed = new ArrayList<>();
    for (int i = members.size() - 1; i >= 0 && killed.size() < majority; i--) {
      EtcdMember m = members.get(i);
      if (m.isRunning()) {
        m.kill();
        killed.add(m);
      }
    }
    return killed;
  }

  /** Restarts every member that is down, resumes every paused one, and waits until all are healthy. */
  public synchronized void bringBackAll() {
    for (EtcdMember m : members) {
      if (m.isPaused()) {
        m.resume();
      }
    }
    for (EtcdMember m : members) {
      if (!m.isRunning()) {
        m.spawn();
      }
    }
    awaitHealthy(config.startTimeout);
  }

  /** Waits until every member reports healthy (has a leader, quorum read succeeds). */
  public synchronized void awaitHealthy(Duration timeout) {
    long deadline = System.nanoTime() + timeout.toNanos();
    for (EtcdMember m : members) {
      m.awaitHealthy(deadline, timeout);
    }
  }

  /** The store's current revision, read from the first member that answers. */
  public synchronized long revision() {
    return anyStatus().revision();
  }

  /**
   * Compacts the key space to the current revision and returns that revision. The revision is read linearizably:
   * a member's own status may lag a write the leader already acknowledged (a 3-member run on 3.4.23 compacted to
   * the revision before the test's last put).
   */
  public synchronized long compact() {
    for (EtcdMember m : members) {
      if (m.isRunning() && !m.isPaused()) {
        Optional<Long> current = EtcdHttp.currentRevision(m.clientUrl(), CALL_TIMEOUT);
        if (current.isPresent()) {
          long revision = current.get();
          EtcdHttp.compact(m.clientUrl(), revision, CALL_TIMEOUT);
          return revision;
        }
      }
    }
    throw new EtcdLaunchException("cannot compact: no etcd member answers; members: " + members);
  }

  // ---- JUnit 5 ---------------------------------------------------------------------------------------

  @Override
  public void beforeAll(ExtensionContext context) {
    start();
  }

  @Override
  public void afterAll(ExtensionContext context) {
    reportSlowness(context);
    close();
  }

  /**
   * Prints, to the test's output, what each member logged as slow during {@code context} (see {@link
   * EtcdMember#slowSinceLastAsked()}); nothing when etcd saw no stall. When the test failed, it says so for a member
   * that logged nothing slow too, with the machine's load average: a timeout etcd did not see points at the machine.
   */
  private synchronized void reportSlowness(ExtensionContext context) {
    boolean failed = context.getExecutionException().isPresent();
    for (EtcdMember m : members) {
      String slow = m.slowSinceLastAsked();
      if (!slow.isEmpty() || failed) {
        System.out.println("etcd " + m.name() + " at " + m.clientUrl() + " during " + context.getDisplayName()
            + ": " + (slow.isEmpty() ? "logged nothing slow" : slow));
      }
    }
    if (failed) {
      System.out.println("etcd's machine after " + context.getDisplayName() + " failed: " + LoadAverage.read());
    }
  }

  @Override
  public synchronized void beforeEach(ExtensionContext context) {
    if (!started) {
      start();
      startedForOneTest = true;
    } else if (config.healBetweenTests) {
      bringBackAll();
    }
  }

  @Override
  public synchronized void afterEach(ExtensionContext context) {
    reportSlowness(context);
    if (startedForOneTest) {
      startedForOneTest = false;
      close();
    }
  }

  // ---- internals -------------------------------------------------------------------------------------

  private void launch(Path binary, int attempt) {
    int[] ports = dir.ports(config.members, config.clientPort);
    String token = "muster-" + UUID.randomUUID().toString().substring(0, 8);
    for (int i = 0; i < config.members; i++) {
      EtcdMember m = new EtcdMember("m" + i, i, ports[2 * i], ports[2 * i + 1], dir.path().resolve("m" + i), binary,
          config.pki != null);
      if (config.pki != null) {
        EtcdHttp.useTls(m.clientUrl(), PemSsl.context(config.pki.ca(), config.pki.server().certificate(),
            config.pki.server().key()));
      }
      members.add(m);
    }
    String initialCluster = members.stream().map(m -> m.name() + "=" + m.peerUrl())
        .collect(Collectors.joining(","));
    for (EtcdMember m : members) {
      m.configure(MemberFlags.of(config, m, initialCluster, token));
    }
    members.forEach(EtcdMember::spawn);
    long deadline = System.nanoTime() + config.startTimeout.toNanos();
    for (EtcdMember m : members) {
      try {
        m.awaitHealthy(deadline, config.startTimeout);
      } catch (EtcdLaunchException e) {
        boolean portClash = members.stream().anyMatch(x -> x.logSays("address already in use"));
        if (portClash && config.clientPort == 0 && attempt < PORT_ATTEMPTS && !dir.hasSavedPorts()) {
          throw new PortTakenException(e);
        }
        throw e;
      }
    }
    if (config.auth) {
      enableAuth();
    }
    if (config.dataDir != null) {
      dir.savePorts(ports, config.members);
    }
  }

  /** Root with this cluster's password, then auth enable; done once per data directory. */
  private void enableAuth() {
    Path file = rootPasswordFile();
    try {
      if (!Files.exists(file)) { // created owner-only: never readable by others, not even between write and chmod
        Files.createFile(file, PosixFilePermissions.asFileAttribute(PosixFilePermissions.fromString("rw-------")));
        Files.writeString(file, UUID.randomUUID() + "\n", StandardOpenOption.WRITE);
      }
      String password = rootPassword();
      for (EtcdMember m : members) {
        EtcdHttp.useAuth(m.clientUrl(), "root", password);
      }
      if (!EtcdHttp.authEnabled(members.get(0).clientUrl(), CALL_TIMEOUT)) {
        EtcdHttp.enableAuth(members.get(0).clientUrl(), "root", password, CALL_TIMEOUT);
      }
    } catch (IOException e) {
      throw new EtcdLaunchException("cannot write the root password to " + file + ": " + e.getMessage(), e);
    }
  }

  /** Whether the cluster runs with etcd authentication ({@link Builder#auth}). */
  public boolean authEnabled() {
    return config.auth;
  }

  /** The password of etcd user {@code root}, when the cluster runs with {@link Builder#auth}. */
  public synchronized String rootPassword() {
    requireAuth();
    try {
      return Files.readString(rootPasswordFile()).strip();
    } catch (IOException e) {
      throw new UncheckedIOException("cannot read " + rootPasswordFile() + ": " + e.getMessage(), e);
    }
  }

  /** The file holding root's password (first line), for {@code muster --user root --password-file FILE}. */
  public synchronized Path rootPasswordFile() {
    requireAuth();
    return dir.path().resolve("root-password");
  }

  private void requireAuth() {
    if (!config.auth) {
      throw new IllegalStateException("this cluster runs without etcd authentication: build it with auth()");
    }
    if (dir == null) {
      throw new IllegalStateException("start the cluster first");
    }
  }

  private EtcdHttp.Status anyStatus() {
    for (EtcdMember m : members) {
      if (m.isRunning() && !m.isPaused()) {
        Optional<EtcdHttp.Status> s = EtcdHttp.status(m.clientUrl(), CALL_TIMEOUT);
        if (s.isPresent()) {
          return s.get();
        }
      }
    }
    throw new EtcdLaunchException("no etcd member answers; members: " + members);
  }

  private void destroyMembers() {
    for (EtcdMember m : members) {
      m.kill();
    }
    if (dir.owned()) {
      for (EtcdMember m : members) {
        ProcessReaper.deleteRecursively(m.dataDir().getParent());
      }
    }
    members.clear();
  }

  private void removeBaseDirIfOwned() {
    if (dir != null && dir.owned()) {
      dir.removeIfOwned();
      dir = null;
    }
  }

  /** Start failed because a picked port was taken between picking and binding; retry with new ports. */
  private static final class PortTakenException extends RuntimeException {
    private static final long serialVersionUID = 1L;
    final transient EtcdLaunchException failure;

    PortTakenException(EtcdLaunchException failure) {
      super(failure.getMessage(), null, false, false);
      this.failure = failure;
    }
  }

  /** Configuration for an {@link EtcdCluster}; {@link #build()} checks it. */
  public static final class Builder {
    // Package-private: read by the cluster and its helpers (ClusterDirectory, MemberFlags) once built.
    int members = 1;
    Path dataDir;
    int clientPort;
    Path binary;
    Duration startTimeout = Duration.ofSeconds(30);
    Duration heartbeat;
    Duration electionTimeout;
    List<String> extraArgs = List.of();
    boolean healBetweenTests = true;
    TestPki pki;
    boolean auth;
    Duration authTokenTtl;

    private Builder() {}

    /**
     * Turn etcd authentication on once the members are up: user {@code root} (role root) with a password made
     * for this cluster ({@link EtcdCluster#rootPassword()}, also in the file {@link EtcdCluster#rootPasswordFile()}),
     * then auth enable. With {@link #tls}, {@link TestPki#client client("root")} authenticates as root too. On a
     * {@link #dataDir} that already holds an auth-enabled cluster nothing is done again. Default: off.
     */
    public Builder auth() {
      this.auth = true;
      return this;
    }

    /** etcd's {@code --auth-token-ttl}: how long a simple token lives unused (etcd's default 300 s). */
    public Builder authTokenTtl(Duration ttl) {
      this.authTokenTtl = Objects.requireNonNull(ttl, "ttl");
      return this;
    }

    /**
     * Serve clients and peers over TLS with certificates from {@code pki}, and require a client certificate
     * signed by its CA ({@code --client-cert-auth}): clients connect to {@code https://} URLs with
     * {@link TestPki#ca()} and one of {@link TestPki#client}'s pairs. Default: plain HTTP.
     */
    public Builder tls(TestPki pki) {
      this.pki = java.util.Objects.requireNonNull(pki, "pki");
      return this;
    }

    /** Number of members, 1 to 9 (default 1). */
    public Builder members(int members) {
      this.members = members;
      return this;
    }

    /**
     * Keep data in this directory (one subdirectory per member) instead of a temporary one; it is not deleted
     * on close, and its ports are remembered so the same cluster can be started again.
     */
    public Builder dataDir(Path dataDir) {
      this.dataDir = dataDir;
      return this;
    }

    /**
     * First member's client port; member {@code i} uses {@code port + 10i} for clients and one more for peers.
     * 0 (the default) picks free loopback ports.
     */
    public Builder clientPort(int clientPort) {
      this.clientPort = clientPort;
      return this;
    }

    /** The etcd binary; default from {@link EtcdBinary#locate()}. */
    public Builder binary(Path binary) {
      this.binary = binary;
      return this;
    }

    /** How long start may take before it fails with the member's log (default 30 s). */
    public Builder startTimeout(Duration startTimeout) {
      this.startTimeout = startTimeout;
      return this;
    }

    /** etcd's {@code --heartbeat-interval} (default etcd's, 100 ms). */
    public Builder heartbeat(Duration heartbeat) {
      this.heartbeat = heartbeat;
      return this;
    }

    /** etcd's {@code --election-timeout} (default etcd's, 1 s). */
    public Builder electionTimeout(Duration electionTimeout) {
      this.electionTimeout = electionTimeout;
      return this;
    }

    /** More etcd flags, appended after Muster's, e.g. {@code --experimental-watch-progress-notify-interval=1s}. */
    public Builder extraArgs(List<String> extraArgs) {
      this.extraArgs = List.copyOf(extraArgs);
      return this;
    }

    /** Whether the JUnit extension restores downed or paused members before each test (default true). */
    public Builder healBetweenTests(boolean heal) {
      this.healBetweenTests = heal;
      return this;
    }

    public EtcdCluster build() {
      if (members < 1 || members > 9) {
        throw new IllegalArgumentException("members is " + members + ": use 1 to 9 (3 or 5 for a real quorum)");
      }
      if (clientPort < 0 || clientPort + 10 * (members - 1) + 1 > 65535) {
        throw new IllegalArgumentException("clientPort is " + clientPort + ": use 0 for free ports, or a port"
            + " that leaves room for " + members + " members (port + 10 per member)");
      }
      Objects.requireNonNull(startTimeout, "startTimeout");
      if (startTimeout.isNegative() || startTimeout.isZero()) {
        throw new IllegalArgumentException("startTimeout is " + startTimeout + ": use a positive duration");
      }
      return new EtcdCluster(this);
    }
  }
}
