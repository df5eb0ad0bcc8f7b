package dev.muster.cli;

import dev.muster.lab.Lab;
import dev.muster.lab.LabParams;
import dev.muster.lab.Scenario;
import dev.muster.lab.ScenarioResult;
import dev.muster.lab.Scenarios;
import dev.muster.testing.ChildProcess;
import dev.muster.testing.ClassDataArchive;
import java.io.PrintStream;
import java.io.PrintWriter;
import java.net.URISyntaxException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;
import picocli.CommandLine.Spec;
import picocli.CommandLine.Model.CommandSpec;

/**
 * {@code muster lab}: the fault lab (SPEC §6) on private etcd processes, with provider and consumer processes
 * started from this same jar. Prints a line per scenario as it starts and ends, writes the reports to
 * {@code --out}, and exits 0 only when every scenario passed.
 */
@Command(
    name = "lab",
    mixinStandardHelpOptions = true,
    description = "Run the fault lab on private etcd processes and print the evidence table.")
final class LabCommand implements Callable<Integer> {
  @Spec
  CommandSpec spec;

  @Mixin
  EtcdBinaryOptions etcdBinary;

  @Option(names = "--etcd-old-bin", paramLabel = "FILE",
      description = "The older etcd line rolling_upgrade starts on (default: $MUSTER_ETCD_OLD_BIN, else the project's"
          + " .cache/etcd/old, etcd 3.4.23, which ./muster fetches).")
  void etcdOldBin(Path binary) {
    System.setProperty("muster.etcd.old.bin", EtcdBinaryOptions.checked(binary, "--etcd-old-bin").toString());
  }

  @Parameters(arity = "0..*", paramLabel = "SCENARIO", description = "Scenarios to run (default: all; see --list).")
  List<String> names = new ArrayList<>();

  @Option(names = "--out", paramLabel = "DIR", defaultValue = "lab-out",
      description = "Where output.txt, env.txt, LIMITS.md and the raw logs go (default ${DEFAULT-VALUE}).")
  Path out;

  @Option(names = "--list", description = "List the scenarios and exit.")
  boolean list;

  @Option(names = "--ttl", paramLabel = "D", defaultValue = "3s", converter = DurationConverter.class,
      description = "Provider lease TTL (default ${DEFAULT-VALUE}, the seed's).")
  Duration ttl;

  @Option(names = "--keepalive", paramLabel = "D", defaultValue = "1s", converter = DurationConverter.class,
      description = "Provider keepalive interval (default ${DEFAULT-VALUE}).")
  Duration keepalive;

  @Option(names = "--interval", paramLabel = "D", defaultValue = "50ms", converter = DurationConverter.class,
      description = "Time between a consumer's calls (default ${DEFAULT-VALUE}).")
  Duration interval;

  @Option(names = "--attempt-timeout", paramLabel = "D", defaultValue = "300ms", converter = DurationConverter.class,
      description = "Consumers' attempt timeout (default ${DEFAULT-VALUE}).")
  Duration attemptTimeout;

  @Option(names = "--ejection", paramLabel = "D", defaultValue = "2s", converter = DurationConverter.class,
      description = "Consumer A's ejection time (default ${DEFAULT-VALUE}).")
  Duration ejection;

  @Option(names = "--retries", paramLabel = "N", defaultValue = "1",
      description = "Consumer A's retries (default ${DEFAULT-VALUE}).")
  int retries;

  @Override
  public Integer call() {
    PrintWriter o = spec.commandLine().getOut();
    LabParams params = new LabParams(ttl, keepalive, interval, attemptTimeout, ejection, retries);
    Lab lab = new Lab(Scenarios.all(), params, musterCommand(), new PrintStream(System.out, true));
    if (list) {
      for (Scenario s : Scenarios.all()) {
        o.printf("%-30s %s%n", s.name(), s.shows());
      }
      Scenarios.notYetBuilt().forEach(n -> o.printf("%-30s (not built yet)%n", n));
      o.flush();
      return 0;
    }
    List<Scenario> selected;
    try {
      selected = lab.select(names);
    } catch (IllegalArgumentException e) {
      throw new Errors.UsageException(e.getMessage());
    }
    o.printf("muster lab: %d scenario(s) on %s, logs and reports in %s%n", selected.size(),
        EtcdBinaryOptions.describe(), out.toAbsolutePath());
    o.flush();
    List<ScenarioResult> results = lab.run(selected, out);
    long passed = results.stream().filter(ScenarioResult::passed).count();
    o.println();
    try {
      o.print(Files.readString(out.resolve("output.txt")));
    } catch (java.io.IOException e) {
      o.println("(cannot read output.txt: " + e.getMessage() + ")");
    }
    if (names.isEmpty() && !Scenarios.notYetBuilt().isEmpty()) {
      o.println("not built yet: " + String.join(", ", Scenarios.notYetBuilt()));
    }
    o.printf("%d of %d passed; reports in %s%n", passed, results.size(), out.toAbsolutePath());
    o.flush();
    return passed == results.size() ? 0 : Errors.FAILURE;
  }

  /**
   * How to start another muster process: this jar, or this classpath when run from classes (tests). The lab's
   * processes are small and short-lived, so they run with the client compiler only and the serial collector, and from
   * the jar with its class-data archive (made once, beside the jar): they start and warm up faster on a 2-core
   * machine shared by a dozen JVMs and etcd.
   */
  static List<String> musterCommand() {
    List<String> flags = new ArrayList<>(ChildProcess.FAST_START_JVM_FLAGS);
    flags.add("-Xss512k");
    try {
      Path source = Path.of(Main.class.getProtectionDomain().getCodeSource().getLocation().toURI());
      if (Files.isRegularFile(source) && source.toString().endsWith(".jar")) {
        List<String> withArchive = new ArrayList<>(flags);
        withArchive.addAll(ClassDataArchive.flags(source, flags, List.of("ls", "--endpoints", "http://127.0.0.1:9")));
        List<String> command = ChildProcess.javaCommand(withArchive, List.of());
        command.addAll(List.of("-jar", source.toString()));
        return command;
      }
    } catch (URISyntaxException | SecurityException e) {
      // fall through to the classpath
    }
    List<String> command = ChildProcess.javaCommand(flags, List.of());
    command.addAll(List.of("-cp", System.getProperty("java.class.path"), Main.class.getName()));
    return command;
  }
}
