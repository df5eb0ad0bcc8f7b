package dev.muster.bench;

import dev.muster.bench.curator.CuratorBench;
import dev.muster.bench.directory.DirectoryBench;
import dev.muster.bench.dns.DnsAbuseBench;
import dev.muster.bench.dns.DnsAbuseResult;
import dev.muster.bench.dns.DnsBench;
import dev.muster.bench.xds.XdsBench;
import dev.muster.bench.etcd.EtcdBench;
import dev.muster.bench.etcd.TlsBench;
import dev.muster.bench.grpc.GrpcBench;
import dev.muster.bench.memory.MemoryBench;
import dev.muster.bench.spring.SpringBench;
import dev.muster.bench.report.Machine;
import dev.muster.bench.report.ResultTables;
import dev.muster.bench.scale.ScaleBench;
import dev.muster.bench.support.Plan;
import dev.muster.bench.support.SideResult;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Instant;
import java.time.temporal.ChronoUnit;
import java.util.EnumSet;
import java.util.List;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;
import picocli.CommandLine;

/**
 * {@code muster bench [--quick] [--only SECTIONS] [--out DIR]}: the microbenchmarks, Muster end to end against
 * the raw-jetcd floor, Muster next to Curator's service discovery on ZooKeeper, and Muster on a plain etcd next to
 * a mutual-TLS one, the gRPC adapter next to gRPC's round_robin, the Spring Boot starter, the DNS gateway under
 * dnsperf, the memory of each component, and (with {@code --scale}) 10,000 watchers and 1,000 providers on one
 * etcd, in one run on one machine, printed as tables and written as CSV. Figures are printed, never judged: nothing
 * here fails on a number.
 */
@Command(name = "muster bench", sortOptions = false,
    description = {
        "Measures Muster on this machine: JMH microbenchmarks (pick, apply, decode), end to end on a private etcd"
            + " next to raw jetcd (the floor), and side by side with Curator's service discovery on a private"
            + " ZooKeeper, on a plain etcd next to a mutual-TLS one (the cost of TLS), and the gRPC adapter next to"
            + " gRPC's round_robin (first RPC, kill -9 window), the Spring Boot starter, and the DNS gateway under"
            + " dnsperf (queries/s, latency, allocation per answer; needs dnsperf), and memory per cached instance,"
            + " cache, registration and balancer endpoint (JOL and heap after GC). Prints its tables and"
            + " writes DIR/results.csv and DIR/results.txt.",
        "Quick: under 4 minutes; full: under 18; --scale adds about 6. Ratios within one run are the result;"
            + " absolute figures move with the machine's load."})
public final class BenchMain implements Callable<Integer> {
  /** The parts of a run; written on the command line as {@link #toString()} ({@code dns-abuse}). */
  enum Section {
    jmh, etcd, curator, tls, grpc, spring, dns, dns_abuse, directory, memory, scale, xds;

    @Override
    public String toString() {
      return name().replace('_', '-');
    }

    static Section parse(String text) {
      try {
        return valueOf(text.trim().toLowerCase(java.util.Locale.ROOT).replace('-', '_'));
      } catch (IllegalArgumentException e) {
        throw new CommandLine.TypeConversionException("'" + text + "' is not a section: use one of "
            + java.util.Arrays.toString(values()));
      }
    }
  }

  /** Sections a run without --only leaves out: each has its own option or is run on its own. */
  static final EnumSet<Section> NOT_BY_DEFAULT = EnumSet.of(Section.scale, Section.dns_abuse, Section.xds);

  @Option(names = {"-h", "--help"}, usageHelp = true, description = "Show this help and exit.")
  boolean help;

  @Option(names = "--quick", description = "Fewer samples and short JMH iterations (under 3 minutes).")
  boolean quick;

  @Option(names = "--only", split = ",", paramLabel = "SECTION",
      converter = SectionConverter.class,
      description = "Run only these sections, comma-separated: ${COMPLETION-CANDIDATES} (default: all but"
          + " scale and dns-abuse; dns-abuse floods the DNS gateway from many loopback addresses and reports the"
          + " amplification and what a real client still gets, before and after issue 35, in about 2 minutes).")
  List<Section> only;

  @Option(names = "--scale", description = "Also run the scale section: 10,000 caches in 4 consumer JVMs directly"
      + " and through etcd's grpc-proxy, reconnect storms (etcd SIGKILLed for 5 s) with jitter on and off and"
      + " behind the proxy, a rolling restart of a 3-member cluster, 1,000 providers, and Curator's side on"
      + " ZooKeeper (about 6 minutes more; not with --quick).")
  boolean scale;

  @Option(names = "--scale-watchers", paramLabel = "N",
      description = "Caches in the scale section, split over 4 JVMs (default: 10000).")
  Integer scaleWatchers;

  @Option(names = "--scale-providers", paramLabel = "N",
      description = "Providers in the scale section, split over 4 JVMs (default: 1000).")
  Integer scaleProviders;

  @Option(names = "--scale-storms", paramLabel = "N",
      description = "Reconnect storms per fleet in the scale section, each a row: directly with jitter on, with it"
          + " off, and through the proxy, and N rounds of the 3-member rolling restart (default: 1; each storm"
          + " adds about 15 s, each round about 45 s).")
  Integer scaleStorms;

  @Option(names = "--scale-warmup-storms", paramLabel = "N",
      description = "Storms per fleet before the measured ones, not in the table (a note each; default: 0). A"
          + " fleet's first storm runs the recovery path in cold JVMs, as a production fleet's first etcd restart"
          + " does; warm-up storms show the steady state apart from it.")
  Integer scaleWarmupStorms;

  @Option(names = "--scale-samples", paramLabel = "N",
      description = "Registrations timed until visible in every cache, per fleet, in the scale section (default: 20;"
          + " a p99 over 20 samples is their maximum: take 100 for a p99 worth the name, about 1 s each more).")
  Integer scaleSamples;

  /** For development: only these parts of the scale section (ScaleBench.Step); a real measurement runs them all. */
  @Option(names = "--scale-steps", split = ",", paramLabel = "STEP", hidden = true)
  List<ScaleBench.Step> scaleSteps;

  @Option(names = "--seed", paramLabel = "N",
      description = "Seed of the kill schedule (the random gaps between kill -9s); default: a new one each run,"
          + " printed, so the kills' phase in the keepalive cycle does not repeat between runs.")
  Long seed;

  @Option(names = "--out", paramLabel = "DIR",
      description = "Where results and process logs go (default: ${DEFAULT-VALUE}).")
  Path out = Path.of("bench-out");

  @Option(names = "--etcd-bin", paramLabel = "FILE",
      description = "The etcd server binary to start (default: $MUSTER_ETCD_BIN; else the project's .cache/etcd,"
          + " etcd 3.5, which ./muster fetches; else etcd on PATH).")
  void etcdBin(Path binary) {
    if (!Files.isRegularFile(binary) || !Files.isExecutable(binary)) {
      throw new CommandLine.ParameterException(new CommandLine(this), "--etcd-bin " + binary + " is not an"
          + " executable file: give the etcd server binary (./muster etcd-install prints where the project's are)");
    }
    System.setProperty("muster.etcd.bin", binary.toAbsolutePath().toString());
  }

  /** {@code dns-abuse} or {@code dns_abuse}, any case. */
  static final class SectionConverter implements CommandLine.ITypeConverter<Section> {
    @Override
    public Section convert(String value) {
      return Section.parse(value);
    }
  }

  public static void main(String[] args) {
    CommandLine cli = new CommandLine(new BenchMain()).setCaseInsensitiveEnumValuesAllowed(true);
    cli.setParameterExceptionHandler((e, a) -> {
      e.getCommandLine().getErr().println("muster bench: " + e.getMessage() + " (see muster bench --help)");
      return 2;
    });
    cli.setExecutionExceptionHandler((e, c, p) -> {
      c.getErr().println("muster bench: " + e.getMessage());
      return 1;
    });
    System.exit(cli.execute(args));
  }

  @Override
  public Integer call() throws IOException {
    EnumSet<Section> sections = only == null || only.isEmpty() ? EnumSet.complementOf(NOT_BY_DEFAULT)
        : EnumSet.copyOf(only);
    if (scale) {
      sections.add(Section.scale);
    }
    if (quick && sections.contains(Section.scale)) {
      throw new CommandLine.ParameterException(new CommandLine(this),
          "the scale section has no quick form: drop --quick, or size it down with --scale-watchers and"
              + " --scale-providers");
    }
    ScaleBench.Plan scalePlan;
    try {
      scalePlan = ScaleBench.Plan.full().withSizes(scaleWatchers, scaleProviders).withStorms(scaleStorms).withSamples(scaleSamples)
          .withWarmupStorms(scaleWarmupStorms)
          .withSteps(scaleSteps);
    } catch (IllegalArgumentException e) {
      throw new CommandLine.ParameterException(new CommandLine(this), e.getMessage());
    }
    long killSeed = seed != null ? seed : new java.util.Random().nextLong();
    Plan plan = quick ? Plan.quick(killSeed) : Plan.full(killSeed);
    Path logs = out.resolve("logs");
    try {
      Files.createDirectories(logs);
    } catch (IOException e) {
      throw new IOException("cannot create " + logs.toAbsolutePath() + " (" + e.getClass().getSimpleName()
          + "): choose a writable directory with --out", e);
    }
    PrintStream progress = System.out;
    long t0 = System.nanoTime();
    String mode = (quick ? "quick" : "full") + ", " + Instant.now().truncatedTo(ChronoUnit.SECONDS) + ", sections "
        + sections + ", kill seed " + killSeed;
    progress.println("muster bench: " + mode + "; " + Machine.etcd() + "; logs in " + logs);
    List<String> failures = new java.util.ArrayList<>();
    List<JmhSuite.Row> jmh = List.of();
    if (sections.contains(Section.jmh)) {
      try {
        jmh = JmhSuite.run(quick, progress);
      } catch (RuntimeException e) { // e.g. another JMH run holds /tmp/jmh.lock: the other sections still run
        failures.add("jmh: " + e.getMessage());
        progress.println("muster bench: " + e.getMessage());
      }
    }
    EtcdBench.Result etcd = sections.contains(Section.etcd) ? EtcdBench.run(plan, logs, progress) : null;
    SideResult curator = sections.contains(Section.curator) ? CuratorBench.run(plan, logs, progress) : null;
    TlsBench.Result tls = sections.contains(Section.tls) ? TlsBench.run(plan, logs, progress) : null;
    GrpcBench.Result grpc = sections.contains(Section.grpc) ? GrpcBench.run(plan, logs, progress) : null;
    SpringBench.Result spring = sections.contains(Section.spring)
        ? SpringBench.run(repository(), quick ? 2 : 5, logs, progress) : null;
    DnsBench.Result dns = sections.contains(Section.dns) ? DnsBench.run(quick, logs, progress) : null;
    DnsAbuseResult dnsAbuse = sections.contains(Section.dns_abuse) ? DnsAbuseBench.run(logs, progress) : null;
    DirectoryBench.Result directory = sections.contains(Section.directory) ? DirectoryBench.run(quick, progress)
        : null;
    MemoryBench.Result memory = sections.contains(Section.memory) ? MemoryBench.run(quick, logs, progress) : null;
    ScaleBench.Result scaled = sections.contains(Section.scale) ? ScaleBench.run(scalePlan, logs, progress) : null;
    XdsBench.Result xds = sections.contains(Section.xds) ? XdsBench.run(logs, progress) : null;
    double took = (System.nanoTime() - t0) / 1e9;
    ResultTables report = new ResultTables(new ResultTables.Run(mode + String.format(", took %.0f s", took),
        Machine.describe(), jmh, etcd == null ? null : etcd.muster(), etcd == null ? null : etcd.floor(), curator,
        CuratorBench.label(plan), tls == null ? null : tls.plain(), tls == null ? null : tls.tls(),
        grpc == null ? null : grpc.muster(), grpc == null ? null : grpc.roundRobin()));
    ByteArrayOutputStream text = new ByteArrayOutputStream();
    try (PrintStream both = new PrintStream(text, true, StandardCharsets.UTF_8)) {
      report.print(both);
      if (spring != null) {
        spring.print(both); // its own table; not in results.csv
      }
      if (dns != null) {
        dns.print(both); // its own table; its figures also go to results.csv
        dns.csv(report);
      }
      if (dnsAbuse != null) {
        dnsAbuse.print(both); // its own table only
      }
      if (directory != null) {
        directory.print(both); // its own table only
      }
      if (memory != null) {
        memory.print(both); // its own table; its figures also go to results.csv
        memory.csv(report);
      }
      if (scaled != null) {
        scaled.print(both); // its own table; its figures also go to results.csv
        scaled.csv(report);
      }
      if (xds != null) {
        xds.print(both); // its own table only
      }
    }
    System.out.print(text.toString(StandardCharsets.UTF_8));
    Files.writeString(out.resolve("results.txt"), text.toString(StandardCharsets.UTF_8));
    report.writeCsv(out.resolve("results.csv"));
    System.out.printf("%nmuster bench: took %.0f s; wrote %s and %s%n", took, out.resolve("results.txt"),
        out.resolve("results.csv"));
    boolean failed = !failures.isEmpty()
        || (etcd != null && !etcd.muster().failures().isEmpty())
        || (curator != null && !curator.failures().isEmpty())
        || (tls != null && !tls.failures().isEmpty())
        || (grpc != null && !grpc.failures().isEmpty())
        || (spring != null && !spring.failures().isEmpty())
        || (dns != null && !dns.failures().isEmpty())
        || (dnsAbuse != null && !dnsAbuse.failures().isEmpty())
        || (directory != null && !directory.failures().isEmpty())
        || (memory != null && !memory.failures().isEmpty())
        || (scaled != null && !scaled.failures().isEmpty())
        || (xds != null && !xds.failures().isEmpty());
    failures.forEach(f -> System.err.println("muster bench: " + f));
    if (failed) {
      System.err.println("muster bench: some measurements failed (see the notes above); their rows are missing");
    }
    return failed ? 1 : 0;
  }

  /** The checkout this bench jar was built in (muster-bench/target/*.jar): where the example jars are. */
  private static Path repository() {
    try {
      Path jar = Path.of(BenchMain.class.getProtectionDomain().getCodeSource().getLocation().toURI());
      return jar.getParent().getParent().getParent();
    } catch (java.net.URISyntaxException e) {
      return Path.of(".");
    }
  }
}
