package dev.muster.cli;

import dev.muster.testing.EtcdCluster;
import dev.muster.testing.EtcdMember;
import dev.muster.testing.TempDirs;
import dev.muster.testing.TestPki;
import java.io.PrintWriter;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.Callable;
import java.util.concurrent.CountDownLatch;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;
import picocli.CommandLine.Model.CommandSpec;

/**
 * {@code muster etcd}: a development registry in the foreground. Starts 1, 3 or 5 etcd members through the
 * launcher, prints their endpoints (with {@code --tls} and {@code --auth}, also the certificates and root's
 * credentials: {@link EtcdAccess}), and stops every member (by pid) on Ctrl-C or SIGTERM.
 */
@Command(
    name = "etcd",
    mixinStandardHelpOptions = true,
    description = {
        "Run a local etcd (or a 3- or 5-member cluster) in the foreground for development.",
        "Prints each member's endpoint and the --endpoints value to use (with --tls and --auth also the certificate"
            + " and credential flags, and MUSTER_* lines to export); Ctrl-C or SIGTERM stops every member."})
final class EtcdCommand implements Callable<Integer> {
  @Spec
  CommandSpec spec;

  @Mixin
  EtcdBinaryOptions etcdBinary;

  @Option(names = "--members", paramLabel = "N", defaultValue = "1",
      description = "Number of members: 1, 3 or 5 (default ${DEFAULT-VALUE}).")
  int members;

  @Option(names = "--data-dir", paramLabel = "DIR",
      description = "Keep the data here (one subdirectory per member) and reuse it next time; default: a"
          + " temporary directory removed on exit.")
  Path dataDir;

  @Option(names = "--client-port", paramLabel = "PORT", defaultValue = "2379",
      description = "Client port of the first member; member i uses PORT+10i for clients and PORT+10i+1 for"
          + " peers. 0 picks free ports (default ${DEFAULT-VALUE}).")
  int clientPort;

  @Option(names = "--start-timeout", paramLabel = "DURATION", defaultValue = "30s",
      converter = DurationConverter.class,
      description = "How long the members may take to become healthy (default ${DEFAULT-VALUE}).")
  Duration startTimeout;

  @Option(names = "--tls",
      description = "Serve clients and peers over TLS only (https://) and require a client certificate signed by a"
          + " throw-away CA, made afresh on every start under DIR/pki with --data-dir, else in a temporary directory"
          + " removed on exit. Prints --cacert and a client certificate whose CN is root.")
  boolean tls;

  @Option(names = "--auth",
      description = "Turn etcd authentication on: user root with a generated password, kept in a file (under"
          + " --data-dir it is reused next time). Prints --user root --password-file FILE.")
  boolean auth;

  @Option(names = "--client-cert", paramLabel = "USER",
      description = "With --tls, also make a client certificate whose CN is USER (its etcd user under"
          + " client-certificate auth); repeat for more.")
  List<String> clientCerts = new ArrayList<>();

  @Override
  public Integer call() throws InterruptedException {
    if (members != 1 && members != 3 && members != 5) {
      throw new Errors.UsageException("--members is " + members + ": use 1, 3 or 5");
    }
    if (clientPort < 0 || clientPort > 65535 - 10 * members) {
      throw new Errors.UsageException("--client-port is " + clientPort + ": use 0 (free ports) or a port up to "
          + (65535 - 10 * members));
    }
    if (!clientCerts.isEmpty() && !tls) {
      throw new Errors.UsageException("--client-cert needs --tls: without TLS there are no client certificates");
    }
    PrintWriter out = spec.commandLine().getOut();
    Path pkiDir = tls ? pkiDir() : null;
    EtcdCluster cluster;
    TestPki pki;
    try {
      pki = tls ? TestPki.create(pkiDir) : null;
      EtcdCluster.Builder b = EtcdCluster.builder()
          .members(members).dataDir(dataDir).clientPort(clientPort).startTimeout(startTimeout);
      if (pki != null) {
        b.tls(pki);
      }
      if (auth) {
        b.auth();
      }
      cluster = b.build();
    } catch (RuntimeException e) {
      removeTemporary(pkiDir);
      throw e;
    }
    CountDownLatch stopped = new CountDownLatch(1);
    Thread stopper = new Thread(() -> {
      out.println("muster etcd: stopping " + members + " member(s)");
      cluster.close();
      removeTemporary(pkiDir);
      stopped.countDown();
    }, "muster-etcd-stop");
    Runtime.getRuntime().addShutdownHook(stopper);
    try {
      out.println("muster etcd: starting " + members + " member(s)" + modes() + "...");
      cluster.start();
    } catch (RuntimeException e) {
      Runtime.getRuntime().removeShutdownHook(stopper);
      cluster.close();
      removeTemporary(pkiDir);
      throw e;
    }
    Set<String> reported = new HashSet<>();
    out.println("muster etcd: " + members + " member(s) healthy; data in " + cluster.baseDir()
        + (dataDir == null ? " (removed on exit)" : " (kept)"));
    for (EtcdMember m : cluster.members()) {
      out.printf("  %s  %s  pid %d%n", m.name(), m.clientUrl(), m.pid().orElse(-1));
    }
    EtcdAccess.of(cluster, pki, dataDir == null, clientCerts).print(out);
    out.println("Ctrl-C stops every member.");
    out.flush();
    while (stopped.getCount() > 0) {
      for (EtcdMember m : cluster.members()) {
        if (!m.isRunning() && reported.add(m.name())) {
          out.println("muster etcd: member " + m.name() + " exited on its own; its log: " + m.logFile());
          out.flush();
        }
      }
      Thread.sleep(1000);
    }
    return 0;
  }

  private String modes() {
    return tls && auth ? " (TLS, client certificates required, etcd authentication on)"
        : tls ? " (TLS, client certificates required)" : auth ? " (etcd authentication on)" : "";
  }

  /** DIR/pki, emptied (its certificates are remade on every start), or a temporary directory. */
  private Path pkiDir() {
    if (dataDir == null) {
      return TempDirs.create(Path.of(System.getProperty("java.io.tmpdir")), "muster-etcd-pki-");
    }
    Path dir = dataDir.toAbsolutePath().resolve("pki");
    if (Files.exists(dir)) {
      TempDirs.delete(dir);
    }
    return dir;
  }

  private void removeTemporary(Path pkiDir) {
    if (pkiDir == null || dataDir != null) {
      return;
    }
    try {
      TempDirs.delete(pkiDir);
    } catch (UncheckedIOException e) {
      // The JVM's own shutdown clean-up may be deleting it at the same moment; it is gone either way.
    }
  }
}
