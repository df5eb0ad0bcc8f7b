package dev.muster.cli;

import dev.muster.testing.EtcdCluster;
import dev.muster.testing.EtcdMember;
import java.io.PrintWriter;
import java.nio.file.Path;
import java.time.Duration;
import java.util.HashSet;
import java.util.Set;
import java.util.concurrent.Callable;
import java.util.concurrent.CountDownLatch;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;
import picocli.CommandLine.Model.CommandSpec;

/**
 * {@code muster etcd}: a development registry in the foreground. Starts 1, 3 or 5 etcd members through the
 * launcher, prints their endpoints, and stops every member (by pid) on Ctrl-C or SIGTERM.
 */
@Command(
    name = "etcd",
    mixinStandardHelpOptions = true,
    description = {
        "Run a local etcd (or a 3- or 5-member cluster) in the foreground for development.",
        "Prints each member's endpoint and the --endpoints value to use; Ctrl-C or SIGTERM stops every member."})
final class EtcdCommand implements Callable<Integer> {
  @Spec
  CommandSpec spec;

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

  @Override
  public Integer call() throws InterruptedException {
    if (members != 1 && members != 3 && members != 5) {
      throw new Errors.UsageException("--members is " + members + ": use 1, 3 or 5");
    }
    if (clientPort < 0 || clientPort > 65535 - 10 * members) {
      throw new Errors.UsageException("--client-port is " + clientPort + ": use 0 (free ports) or a port up to "
          + (65535 - 10 * members));
    }
    PrintWriter out = spec.commandLine().getOut();
    EtcdCluster cluster = EtcdCluster.builder()
        .members(members).dataDir(dataDir).clientPort(clientPort).startTimeout(startTimeout).build();
    CountDownLatch stopped = new CountDownLatch(1);
    Thread stopper = new Thread(() -> {
      out.println("muster etcd: stopping " + members + " member(s)");
      cluster.close();
      stopped.countDown();
    }, "muster-etcd-stop");
    Runtime.getRuntime().addShutdownHook(stopper);
    try {
      out.println("muster etcd: starting " + members + " member(s)...");
      cluster.start();
    } catch (RuntimeException e) {
      Runtime.getRuntime().removeShutdownHook(stopper);
      cluster.close();
      throw e;
    }
    Set<String> reported = new HashSet<>();
    out.println("muster etcd: " + members + " member(s) healthy; data in " + cluster.baseDir()
        + (dataDir == null ? " (removed on exit)" : " (kept)"));
    for (EtcdMember m : cluster.members()) {
      out.printf("  %s  %s  pid %d%n", m.name(), m.clientUrl(), m.pid().orElse(-1));
    }
    out.println("--endpoints " + cluster.endpointsString());
    out.println("export MUSTER_ENDPOINTS=" + cluster.endpointsString());
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
}
