package dev.muster.bench.dns;

import dev.muster.bench.etcd.RawEtcd;
import dev.muster.bench.report.ResultTables;
import dev.muster.bench.support.BenchException;
import dev.muster.bench.support.Wait;
import dev.muster.dns.DnsConfig;
import dev.muster.dns.DnsGateway;
import dev.muster.etcd.EtcdConfig;
import dev.muster.etcd.EtcdRegistry;
import dev.muster.testing.EtcdCluster;
import io.etcd.jetcd.Client;
import java.io.IOException;
import java.io.PrintStream;
import java.lang.management.ManagementFactory;
import java.net.InetSocketAddress;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.stream.Collectors;
import org.xbill.DNS.DClass;
import org.xbill.DNS.Message;
import org.xbill.DNS.Name;
import org.xbill.DNS.OPTRecord;
import org.xbill.DNS.Record;
import org.xbill.DNS.Section;
import org.xbill.DNS.TXTRecord;
import org.xbill.DNS.TextParseException;
import org.xbill.DNS.Type;

/**
 * The DNS gateway under load: {@link DnsFleet}'s 10,000 instances in 100 services on a private etcd member, one
 * {@link DnsGateway} in this JVM (response rate limiting off: dnsperf sends from one address), and
 * {@link DnsPerf dnsperf} against it over UDP on loopback for a fixed time, once with a mix of the DNS-SD queries
 * and once with instance SRV queries only. Then the allocation of one {@link DnsGateway#answer} (the serving threads'
 * code path) for the same SRV answer from a service of 10 instances and from one of 10,000, read with
 * {@code ThreadMXBean.getThreadAllocatedBytes}: whether a query's garbage grows with the service's size.
 *
 * <p>dnsperf runs on the same two cores as the gateway: each row says how much CPU each took. Figures are printed,
 * never judged. Runs on the calling thread.
 */
public final class DnsBench {
  /** UDP serving threads: one per core. */
  static final int UDP_THREADS = 2;
  static final int PROBE_SMALL = 10;
  static final int PROBE_LARGE = 10_000;
  private static final Duration LIMIT = Duration.ofSeconds(120);
  private static final String STOPPED = "SRV, etcd stopped";

  /**
   * One dnsperf run.
   *
   * @param truncatedPercent of the queries the gateway answered in the run, those with TC set (the answer did not
   *     fit the UDP reply: a real client retries over TCP)
   * @param gatewayCores CPU the gateway's JVM used over the run, in cores
   * @param dnsperfCores CPU dnsperf used over the run, in cores
   * @param otherCores the machine's busy time over the run less the gateway's and dnsperf's, in cores
   */
  public record Row(String mix, DnsPerf.Options options, DnsPerf.Output out, double truncatedPercent, long errors,
      double gatewayCores, double dnsperfCores, double otherCores) {}

  /** One answer() in this JVM on one thread, for one kind of query of the mix: time, allocation, reply size. */
  public record PerKind(String kind, double nanos, double bytes, int replyBytes, boolean truncated) {}

  /** Bytes allocated by one answer() of the same SRV answer at a small and a large service. */
  public record Allocation(int smallInstances, int largeInstances, int replyBytes, double smallBytes,
      double largeBytes, double smallNanos, double largeNanos, int answers) {}

  public record Result(List<Row> rows, List<PerKind> kinds, Allocation allocation, List<String> notes,
      List<String> failures) {
    public void print(PrintStream out) {
      out.println();
      out.printf("7. DNS gateway: dnsperf over UDP on loopback, %,d instances in %d services (latency in ms, as"
          + " dnsperf saw it; dnsperf and the gateway share the machine's cores)%n",
          DnsFleet.SERVICES * DnsFleet.PER_SERVICE, DnsFleet.SERVICES);
      if (!rows.isEmpty()) {
        out.printf("%-17s %7s %8s %7s %7s %7s %7s %10s %6s %7s %5s %5s %5s %6s%n", "mix", "dnsperf", "q/s", "p50",
            "p99", "p99.9", "max", "completed", "lost", "trunc%", "gw", "perf", "other", "gw us");
      }
      for (Row r : rows) {
        DnsPerf.Output o = r.out();
        out.printf(Locale.ROOT, "%-17s %7s %8.0f %7.2f %7.2f %7.2f %7.2f %10d %6d %7.1f %5.2f %5.2f %5.2f %6.1f%n",
            r.mix(), "-q " + r.options().outstanding(), o.qps(), o.percentileMs(50), o.percentileMs(99),
            o.percentileMs(99.9), o.maxMs(), o.completed(), o.lost(), r.truncatedPercent(), r.gatewayCores(),
            r.dnsperfCores(), r.otherCores(), r.gatewayCores() * 1e6 / o.qps());
      }
      if (!rows.isEmpty()) {
        out.printf(Locale.ROOT, "  (dnsperf %s -e, %.0f s a row; gw, perf, other: CPU of the gateway's JVM, of"
            + " dnsperf and of everything else on the machine over the run, in cores of the %d; gw us: the gateway's"
            + " CPU per query, in microseconds)%n",
            "-c " + rows.get(0).options().clients() + " -T " + rows.get(0).options().threads(),
            rows.get(0).out().runSeconds(),
            Runtime.getRuntime().availableProcessors());
      }
      if (!kinds.isEmpty()) {
        out.printf("%-22s %s%n", "answer(), one thread", kinds.stream().map(k -> String.format(Locale.ROOT,
            "%s %.1f us %.0f B (%d B%s)", k.kind(), k.nanos() / 1000, k.bytes(), k.replyBytes(),
            k.truncated() ? " TC" : "")).collect(Collectors.joining(" | ")));
      }
      if (allocation != null) {
        Allocation a = allocation;
        out.printf(Locale.ROOT, "%-30s %,d instances: %.0f B, %.0f ns | %,d instances: %.0f B, %.0f ns"
            + " (one SRV answer of %d bytes, %,d answers, one thread)%n", "allocated per answer()",
            a.smallInstances(), a.smallBytes(), a.smallNanos(), a.largeInstances(), a.largeBytes(), a.largeNanos(),
            a.replyBytes(), a.answers());
      }
      notes.forEach(n -> out.println("  note: " + n));
      failures.forEach(f -> out.println("  failed: " + f));
    }

    /** The same figures as rows of results.csv, section {@code dns}. */
    public void csv(ResultTables report) {
      for (Row r : rows) {
        DnsPerf.Output o = r.out();
        String m = r.mix() + " (dnsperf " + r.options().label() + ")";
        report.csvRow("dns", m + ": queries per second", "q/s", "muster-dns", Long.toString(o.completed()), "", "",
            "", num(o.qps()));
        report.csvRow("dns", m + ": latency", "ms", "muster-dns", Long.toString(o.completed()),
            num(o.percentileMs(50)), num(o.percentileMs(99)), num(o.maxMs()), "");
        report.csvRow("dns", m + ": latency p99.9", "ms", "muster-dns", Long.toString(o.completed()), "", "", "",
            num(o.percentileMs(99.9)));
        report.csvRow("dns", m + ": queries lost", "queries", "muster-dns", Long.toString(o.sent()), "", "", "",
            Long.toString(o.lost()));
        report.csvRow("dns", m + ": truncated answers", "percent", "muster-dns", "", "", "", "",
            num(r.truncatedPercent()));
        report.csvRow("dns", m + ": gateway CPU per query", "us", "muster-dns", "", "", "", "",
            num(r.gatewayCores() * 1e6 / o.qps()));
        report.csvRow("dns", m + ": CPU", "cores", "muster-dns", "", "", "", "", num(r.gatewayCores()));
        report.csvRow("dns", m + ": CPU", "cores", "dnsperf", "", "", "", "", num(r.dnsperfCores()));
        report.csvRow("dns", m + ": CPU", "cores", "rest of the machine", "", "", "", "", num(r.otherCores()));
      }
      if (allocation != null) {
        report.csvRow("dns", "allocated per SRV answer, " + allocation.smallInstances() + " instances", "bytes",
            "muster-dns", Integer.toString(allocation.answers()), "", "", "", num(allocation.smallBytes()));
        report.csvRow("dns", "allocated per SRV answer, " + allocation.largeInstances() + " instances", "bytes",
            "muster-dns", Integer.toString(allocation.answers()), "", "", "", num(allocation.largeBytes()));
      }
    }

    private static String num(double v) {
      return Double.isNaN(v) ? "" : String.format(Locale.ROOT, "%.3f", v);
    }
  }

  private final boolean quick;
  private final Path logs;
  private final PrintStream progress;
  private final List<Row> rows = new ArrayList<>();
  private final List<PerKind> kinds = new ArrayList<>();
  private final List<String> notes = new ArrayList<>();
  private final List<String> failures = new ArrayList<>();
  private Allocation allocation;

  private DnsBench(boolean quick, Path logs, PrintStream progress) {
    this.quick = quick;
    this.logs = logs;
    this.progress = progress;
  }

  /**
   * dnsperf's queries in flight in the measured runs: on this 2-core machine the gateway's throughput levels off
   * from about 50 (100 only doubles the latency), and 20 is the point just below, where latency is mostly service
   * time rather than queueing. dnsperf under 20 keeps too few in flight to load anything (its sender waits).
   */
  static final int[] OUTSTANDING = {20, 50};

  /** The dnsperf options of one measured run: one socket, one pair of threads (dnsperf shares the two cores). */
  static DnsPerf.Options options(boolean quick, int outstanding) {
    return new DnsPerf.Options(quick ? 5 : 20, 1, 1, outstanding);
  }

  public static Result run(boolean quick, Path logs, PrintStream progress) {
    DnsBench b = new DnsBench(quick, logs, progress);
    Optional<Path> dnsperf = DnsPerf.find();
    if (dnsperf.isEmpty()) {
      b.failures.add("dns: " + DnsPerf.INSTALL);
      return b.result();
    }
    try (EtcdCluster etcd = EtcdCluster.builder().members(1).build().start();
        Client raw = RawEtcd.client(etcd.endpointsString());
        EtcdRegistry registry = EtcdRegistry.connect(EtcdConfig.of(etcd.endpointsString()))) {
      progress.println("dns: started etcd at " + etcd.endpointsString());
      b.load(etcd, registry, raw, dnsperf.get());
      b.allocation(registry, raw);
    } catch (RuntimeException e) {
      b.failures.add("dns: " + e.getMessage());
    }
    return b.result();
  }

  private Result result() {
    return new Result(List.copyOf(rows), List.copyOf(kinds), allocation, List.copyOf(notes), List.copyOf(failures));
  }

  private static DnsConfig config(String namespace) {
    return DnsConfig.builder().listen(new InetSocketAddress("127.0.0.1", 0)).domain(DnsFleet.DOMAIN)
        .namespaces(List.of(namespace)).rateLimit(0, 1).rrlResponsesPerSecond(0).udpThreads(UDP_THREADS).build();
  }

  // ---- dnsperf --------------------------------------------------------------------------------------------------

  private void load(EtcdCluster etcd, EtcdRegistry registry, Client raw, Path dnsperf) {
    long t0 = System.nanoTime();
    DnsFleet.write(raw, DnsFleet.fleet());
    progress.printf("dns: wrote %,d instances in %d services in %.1f s; starting the gateway...%n",
        DnsFleet.SERVICES * DnsFleet.PER_SERVICE, DnsFleet.SERVICES, (System.nanoTime() - t0) / 1e9);
    Path mixed = DnsFleet.writeLines(logs.resolve("dns-mixed.txt"), DnsFleet.mixed(100_000));
    Path srv = DnsFleet.writeLines(logs.resolve("dns-srv.txt"), DnsFleet.srvOnly());
    long t1 = System.nanoTime();
    try (DnsGateway gateway = DnsGateway.start(registry, config(DnsFleet.NAMESPACE), LIMIT)) {
      awaitServed(gateway, DnsFleet.NAMESPACE, DnsFleet.SERVICES, DnsFleet.PER_SERVICE);
      progress.printf("dns: the gateway serves every instance on %s after %.1f s; warming up (dnsperf 5 s)...%n",
          gateway.address(), (System.nanoTime() - t1) / 1e9);
      DnsPerf.run(dnsperf, gateway.address(), mixed, new DnsPerf.Options(5, 1, 1, OUTSTANDING[0]),
          logs.resolve("dnsperf-warmup.out"));
      String shares = Arrays.stream(DnsFleet.Kind.values())
          .map(k -> k.name().toLowerCase(Locale.ROOT).replace('_', '-') + " " + k.percent)
          .collect(Collectors.joining(", "));
      for (String mix : List.of("mixed", "SRV only")) {
        for (int q : OUTSTANDING) {
          measure(gateway, dnsperf, mix, mix.equals("mixed") ? mixed : srv, options(quick, q));
        }
      }
      etcd.member(0).pause(); // SIGSTOP: an answer that needed etcd would now time out
      try {
        measure(gateway, dnsperf, STOPPED, srv, options(quick, OUTSTANDING[0]));
      } finally {
        etcd.member(0).resume();
      }
      perKind(gateway);
      notes.add("mixed: " + shares + " (% of 100,000 random queries over all services and instances); SRV only:"
          + " each of the 10,000 instances' SRV once, in random order");
      notes.add("a service's PTR (100 instances, each with SRV, TXT and A in Additional) and its A (100 distinct"
          + " addresses) do not fit a 1,232-byte UDP reply: those answers carry TC (dnsperf counts them as"
          + " answered; a real client would ask again over TCP)");
      notes.add(STOPPED + ": SRV only again with the etcd member stopped (SIGSTOP) for the whole run, so every"
          + " answer came from the caches in this JVM, none from a registry round trip");
    }
  }

  private void measure(DnsGateway gateway, Path dnsperf, String mix, Path data, DnsPerf.Options o) {
    String label = mix + " -q " + o.outstanding();
    progress.printf("dns: dnsperf %s, %d s (%s)...%n", mix, o.seconds(), o.label());
    // A full collection first: the fleet's records (built a few seconds ago, and still being copied from survivor
    // space to survivor space by every young collection until they are old enough) move to the old generation, as
    // in a gateway that has run for a minute; each row then starts from the same heap.
    System.gc();
    DnsGateway.Stats before = gateway.stats();
    Cpu.Reading cpu = Cpu.read();
    DnsPerf.Output out = DnsPerf.run(dnsperf, gateway.address(), data, o,
        logs.resolve("dnsperf-" + mix.replace(' ', '-').toLowerCase(Locale.ROOT) + "-q" + o.outstanding() + ".out"));
    Cpu.Reading cpuAfter = Cpu.read();
    DnsGateway.Stats after = gateway.stats();
    long queries = after.queries() - before.queries();
    long truncated = after.truncated() - before.truncated();
    long errors = after.errors() - before.errors();
    double wall = (cpuAfter.wallNanos() - cpu.wallNanos()) / 1e9;
    double gw = (cpuAfter.processNanos() - cpu.processNanos()) / 1e9 / wall;
    double perf = (cpuAfter.childrenSeconds() - cpu.childrenSeconds()) / wall;
    double machine = (cpuAfter.machineSeconds() - cpu.machineSeconds()) / wall;
    rows.add(new Row(mix, o, out, queries == 0 ? Double.NaN : 100.0 * truncated / queries, errors, gw,
        perf, Math.max(0, machine - gw - perf)));
    if (errors != 0 || after.rateLimited() != before.rateLimited() || after.dropped() != before.dropped()) {
      notes.add(label + ": the gateway counted " + errors + " errors, "
          + (after.rateLimited() - before.rateLimited()) + " rate-limited and "
          + (after.dropped() - before.dropped()) + " dropped queries");
    }
    if (out.rcodes().keySet().stream().anyMatch(r -> !r.equals("NOERROR"))) {
      notes.add(label + ": response codes " + out.rcodes());
    }
    if (out.latenciesMicros().getTotalCount() != out.completed()) {
      notes.add(label + ": dnsperf printed " + out.latenciesMicros().getTotalCount() + " answer lines for "
          + out.completed() + " completed queries");
    }
    progress.printf(Locale.ROOT, "dns: %s: %.0f q/s, p99 %.2f ms, %d lost%n", label, out.qps(),
        out.percentileMs(99), out.lost());
  }

  /** Each kind of query of the mix about one instance, answered in this JVM (after dnsperf warmed the path). */
  private void perKind(DnsGateway gateway) {
    int n = quick ? 20_000 : 100_000;
    for (DnsFleet.Kind kind : DnsFleet.Kind.values()) {
      String[] line = DnsFleet.query(kind, 7, 42).split(" ");
      byte[] query = query(line[0], Type.value(line[1]));
      byte[] reply = gateway.answer(query, true);
      Allocator.perAnswer(gateway, query, n);
      double[] f = Allocator.perAnswer(gateway, query, n);
      kinds.add(new PerKind(kind.name().toLowerCase(Locale.ROOT).replace('_', '-'), f[1], f[0], reply.length,
          (reply[2] & 0x02) != 0));
    }
  }

  // ---- allocation -----------------------------------------------------------------------------------------------

  private void allocation(EtcdRegistry registry, Client raw) {
    progress.printf("dns: allocation per answer, services of %d and %,d instances...%n", PROBE_SMALL, PROBE_LARGE);
    DnsFleet.write(raw, DnsFleet.probe(PROBE_SMALL, PROBE_LARGE));
    try (DnsGateway gateway = DnsGateway.start(registry, config(DnsFleet.PROBE_NAMESPACE), LIMIT)) {
      awaitServed(gateway, DnsFleet.PROBE_NAMESPACE, Map.of("small", PROBE_SMALL, "large", PROBE_LARGE));
      String id = DnsFleet.id(PROBE_SMALL / 2, Math.max(PROBE_SMALL, PROBE_LARGE));
      byte[] small = query(DnsFleet.instanceName(DnsFleet.PROBE_NAMESPACE, "small", id), Type.SRV);
      byte[] large = query(DnsFleet.instanceName(DnsFleet.PROBE_NAMESPACE, "large", id), Type.SRV);
      byte[] smallReply = gateway.answer(small, true);
      byte[] largeReply = gateway.answer(large, true);
      if (smallReply == null || largeReply == null || answers(smallReply) == 0 || answers(largeReply) == 0) {
        throw new BenchException("the probe's SRV queries got no answer");
      }
      if (smallReply.length != largeReply.length) {
        notes.add("the probe's two SRV replies differ in size: " + smallReply.length + " and " + largeReply.length
            + " bytes");
      }
      int n = quick ? 50_000 : 200_000;
      Allocator.perAnswer(gateway, small, n); // warm-up: the JIT compiles the path first
      Allocator.perAnswer(gateway, large, n);
      double[] smallRounds = new double[3];
      double[] largeRounds = new double[3];
      double[] smallNanos = new double[3];
      double[] largeNanos = new double[3];
      for (int r = 0; r < 3; r++) { // in turns, so that neither gets the better-warmed JIT
        double[] s = Allocator.perAnswer(gateway, small, n);
        double[] l = Allocator.perAnswer(gateway, large, n);
        smallRounds[r] = s[0];
        smallNanos[r] = s[1];
        largeRounds[r] = l[0];
        largeNanos[r] = l[1];
      }
      allocation = new Allocation(PROBE_SMALL, PROBE_LARGE, smallReply.length, median(smallRounds),
          median(largeRounds), median(smallNanos), median(largeNanos), n);
      notes.add("allocated per answer(): the median of 3 rounds of " + String.format("%,d", n) + " answer(query,"
          + " udp) calls on one thread (after as many to warm up), ThreadMXBean.getCurrentThreadAllocatedBytes;"
          + " the query is the same instance's SRV (with EDNS0) in namespace " + DnsFleet.PROBE_NAMESPACE
          + ", services small and large");
    } catch (RuntimeException e) {
      failures.add("dns allocation: " + e.getMessage());
    }
  }

  private static double median(double[] v) {
    double[] s = v.clone();
    Arrays.sort(s);
    return s[s.length / 2];
  }

  // ---- queries --------------------------------------------------------------------------------------------------

  /** A query as dnsperf -e sends it: RD set, one question, an OPT record (payload 4096). */
  static byte[] query(String name, int type) {
    try {
      Message m = Message.newQuery(Record.newRecord(Name.fromString(name), type, DClass.IN));
      m.addRecord(new OPTRecord(4096, 0, 0), Section.ADDITIONAL);
      return m.toWire();
    } catch (TextParseException e) {
      throw new IllegalArgumentException(name + " is no DNS name: " + e.getMessage(), e);
    }
  }

  private static int answers(byte[] reply) {
    try {
      return new Message(reply).getSection(Section.ANSWER).size();
    } catch (IOException e) {
      throw new BenchException("the gateway's reply does not parse: " + e.getMessage(), e);
    }
  }

  private static void awaitServed(DnsGateway gateway, String namespace, int services, int perService) {
    Map<String, Integer> expected = new java.util.HashMap<>();
    for (int s = 0; s < services; s++) {
      expected.put(DnsFleet.service(s), perService);
    }
    awaitServed(gateway, namespace, expected);
  }

  /**
   * Waits until the zone's {@code _muster-status} TXT (asked over the TCP path, which has room for it) shows each
   * service with its expected number of instances served.
   */
  private static void awaitServed(DnsGateway gateway, String namespace, Map<String, Integer> expected) {
    byte[] status = query("_muster-status." + DnsFleet.zone(namespace), Type.TXT);
    Wait.until("the gateway to serve every instance of namespace " + namespace, LIMIT, () -> {
      Map<String, Integer> served = served(gateway.answer(status, false));
      return served.equals(expected);
    });
  }

  /** service → instances, from a {@code _muster-status} reply. */
  private static Map<String, Integer> served(byte[] reply) {
    Map<String, Integer> out = new java.util.HashMap<>();
    try {
      for (Record r : new Message(reply).getSection(Section.ANSWER)) {
        if (r instanceof TXTRecord txt) {
          for (String s : txt.getStrings()) {
            if (s.startsWith("service=")) {
              String[] f = s.split(" ");
              out.put(f[0].substring("service=".length()),
                  Integer.parseInt(f[f.length - 1].substring("instances=".length())));
            }
          }
        }
      }
    } catch (IOException e) {
      throw new BenchException("the status reply does not parse: " + e.getMessage(), e);
    }
    return out;
  }

  /** Allocation and time of {@link DnsGateway#answer} on the calling thread. */
  static final class Allocator {
    private static final com.sun.management.ThreadMXBean THREADS =
        (com.sun.management.ThreadMXBean) ManagementFactory.getThreadMXBean();

    private Allocator() {}

    /** {bytes allocated per call, nanoseconds per call} over {@code n} calls. */
    static double[] perAnswer(DnsGateway gateway, byte[] query, int n) {
      long sink = 0;
      long b0 = THREADS.getCurrentThreadAllocatedBytes();
      long t0 = System.nanoTime();
      for (int i = 0; i < n; i++) {
        sink += gateway.answer(query, true).length;
      }
      long t1 = System.nanoTime();
      long b1 = THREADS.getCurrentThreadAllocatedBytes();
      if (sink == 0) {
        throw new BenchException("empty replies");
      }
      return new double[] {(b1 - b0) / (double) n, (t1 - t0) / (double) n};
    }
  }

  /**
   * CPU time of this JVM, of its reaped children (dnsperf, once waited for) and of the whole machine, and the wall
   * clock: over a run, the machine's busy time less this JVM's and dnsperf's is what else ran (other processes, and
   * kernel work accounted to no process, such as part of the loopback's packet processing).
   */
  static final class Cpu {
    record Reading(long wallNanos, long processNanos, double childrenSeconds, double machineSeconds) {}

    private static final com.sun.management.OperatingSystemMXBean OS =
        (com.sun.management.OperatingSystemMXBean) ManagementFactory.getOperatingSystemMXBean();
    /** /proc reports times in USER_HZ ticks: 100 a second on Linux on x86 and ARM. */
    private static final double TICKS_PER_SECOND = 100;

    private Cpu() {}

    static Reading read() {
      return new Reading(System.nanoTime(), OS.getProcessCpuTime(), children(), machine());
    }

    /** cutime + cstime of /proc/self/stat: the CPU of the children this process has waited for; NaN elsewhere. */
    private static double children() {
      try {
        String stat = Files.readString(Path.of("/proc/self/stat"));
        String[] f = stat.substring(stat.lastIndexOf(')') + 2).split(" "); // f[0] is field 3 (state)
        return (Long.parseLong(f[13]) + Long.parseLong(f[14])) / TICKS_PER_SECOND;
      } catch (IOException | RuntimeException e) {
        return Double.NaN;
      }
    }

    /** The busy time of all cores from /proc/stat's cpu line (all but idle and iowait); NaN elsewhere. */
    private static double machine() {
      try (java.util.stream.Stream<String> lines = Files.lines(Path.of("/proc/stat"))) {
        String[] f = lines.filter(l -> l.startsWith("cpu ")).findFirst().orElseThrow().trim().split("\\s+");
        long busy = 0;
        for (int i = 1; i <= Math.min(8, f.length - 1); i++) { // user nice system idle iowait irq softirq steal
          busy += i == 4 || i == 5 ? 0 : Long.parseLong(f[i]);
        }
        return busy / TICKS_PER_SECOND;
      } catch (IOException | RuntimeException e) {
        return Double.NaN;
      }
    }
  }
}
