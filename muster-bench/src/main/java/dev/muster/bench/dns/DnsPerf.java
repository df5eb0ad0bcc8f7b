package dev.muster.bench.dns;

import dev.muster.bench.support.BenchException;
import dev.muster.testing.Executables;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.TimeUnit;
import org.HdrHistogram.Histogram;

/**
 * DNS-OARC's {@code dnsperf} (the Debian package), run as a child process, and its output read.
 *
 * <p>dnsperf 2.10 prints no latency percentiles (no histogram option): its verbose mode ({@code -v}) prints one line
 * per answer, {@code > RCODE NAME TYPE SECONDS}, or {@code > T NAME TYPE} for a query that timed out, and the
 * percentiles here are taken from those lines. The summary (sent, completed, lost, queries per second, average,
 * minimum and maximum latency) is dnsperf's own.
 */
final class DnsPerf {
  /** What the section tells when dnsperf is missing. */
  static final String INSTALL = "dnsperf is not installed: apt-get install -y dnsperf";

  /**
   * One run's flags.
   *
   * @param seconds {@code -l}
   * @param clients {@code -c}: sockets (source ports) dnsperf sends from
   * @param threads {@code -T}: pairs of send and receive threads
   * @param outstanding {@code -q}: queries in flight at most; with a closed loop like this one, mean latency is
   *     about outstanding / throughput (Little's law), so this sets where a run sits between latency and load
   */
  record Options(int seconds, int clients, int threads, int outstanding) {
    String label() {
      return "-c " + clients + " -T " + threads + " -q " + outstanding;
    }
  }

  /**
   * What one run printed.
   *
   * @param latenciesMicros the latency of each answer in microseconds, from the {@code -v} lines
   * @param timedOut {@code -v} lines with {@code T} (timed out) or {@code I} (interrupted)
   */
  record Output(long sent, long completed, long lost, double runSeconds, double qps, double avgMs, double minMs,
      double maxMs, Map<String, Long> rcodes, int requestBytes, int responseBytes, Histogram latenciesMicros,
      long timedOut) {

    /** A percentile of the answers' latencies in milliseconds; NaN when there was no answer. */
    double percentileMs(double p) {
      return latenciesMicros.getTotalCount() == 0 ? Double.NaN : latenciesMicros.getValueAtPercentile(p) / 1000.0;
    }
  }

  private DnsPerf() {}

  /** dnsperf on the PATH (or in /usr/local/bin, /usr/bin, /usr/sbin), or empty. */
  static Optional<Path> find() {
    return Executables.find("dnsperf");
  }

  /** The first executable {@code dnsperf} in {@code dirs}, or empty. */
  static Optional<Path> find(List<Path> dirs) {
    return Executables.find("dnsperf", dirs);
  }

  /**
   * Runs {@code dnsperf -v -e} (EDNS0, so a reply may be as large as the gateway's UDP limit) against
   * {@code server} over UDP with the queries of {@code data}, waits for it, and reads what it printed. Its complete
   * output goes to {@code log}.tmp and is read from there; {@code log} keeps all but the per-answer lines.
   */
  static Output run(Path binary, InetSocketAddress server, Path data, Options o, Path log) {
    List<String> command = List.of(binary.toString(), "-s", server.getAddress().getHostAddress(), "-p",
        Integer.toString(server.getPort()), "-d", data.toString(), "-l", Integer.toString(o.seconds()), "-c",
        Integer.toString(o.clients()), "-T", Integer.toString(o.threads()), "-q", Integer.toString(o.outstanding()),
        "-t", "2", "-e", "-v", "-W");
    Path raw = log.resolveSibling(log.getFileName() + ".tmp");
    try {
      Process p = new ProcessBuilder(command).redirectErrorStream(true).redirectOutput(raw.toFile()).start();
      if (!p.waitFor(o.seconds() + 30L, TimeUnit.SECONDS)) {
        p.destroyForcibly();
        throw new BenchException("dnsperf did not stop within " + (o.seconds() + 30) + " s (see " + log + ")");
      }
      Output out;
      try (BufferedReader in = Files.newBufferedReader(raw, StandardCharsets.UTF_8)) {
        out = parse(in, log);
      }
      if (p.exitValue() != 0 || out.sent() == 0) {
        throw new BenchException("dnsperf exited with " + p.exitValue() + " after sending " + out.sent()
            + " queries (see " + log + ")");
      }
      return out;
    } catch (IOException e) {
      throw new UncheckedIOException("cannot run " + String.join(" ", command) + ": " + e.getMessage(), e);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new BenchException("interrupted while dnsperf ran");
    } finally {
      try {
        Files.deleteIfExists(raw);
      } catch (IOException e) {
        // a left-over temporary file in the logs directory; the figures are read already
      }
    }
  }

  /**
   * Reads dnsperf's output (verbose or not); copies every line but the per-answer ones to {@code keep} when it is
   * not null.
   */
  static Output parse(BufferedReader in, Path keep) throws IOException {
    Histogram latencies = new Histogram(TimeUnit.SECONDS.toMicros(60), 3);
    List<String> kept = new ArrayList<>();
    Map<String, String> stats = new LinkedHashMap<>();
    long timedOut = 0;
    for (String line = in.readLine(); line != null; line = in.readLine()) {
      if (line.startsWith("> ")) {
        String[] f = line.split(" ");
        if (f.length == 4 && (f[1].equals("T") || f[1].equals("I"))) {
          timedOut++;
        } else if (f.length == 5) {
          latencies.recordValue(Math.round(Double.parseDouble(f[4]) * 1e6));
        } else {
          kept.add(line); // not an answer line after all: kept, so that nothing is lost silently
        }
        continue;
      }
      kept.add(line);
      int colon = line.indexOf(':');
      if (line.startsWith("  ") && colon > 0) {
        stats.put(line.substring(0, colon).trim(), line.substring(colon + 1).trim());
      }
    }
    if (keep != null) {
      Files.write(keep, kept, StandardCharsets.UTF_8);
    }
    String[] latency = field(stats, "Average Latency (s)").replace("(", "").replace(")", "").replace(",", "")
        .split("\\s+"); // "0.000772 (min 0.000402, max 0.019581)"
    String[] sizes = field(stats, "Average packet size").replace(",", "").split("\\s+"); // "request 56, response 72"
    return new Output(firstLong(field(stats, "Queries sent")), firstLong(field(stats, "Queries completed")),
        firstLong(field(stats, "Queries lost")), Double.parseDouble(field(stats, "Run time (s)")),
        Double.parseDouble(field(stats, "Queries per second")), millis(latency[0]), millis(latency[2]),
        millis(latency[4]), rcodes(stats.getOrDefault("Response codes", "")), Integer.parseInt(sizes[1]),
        Integer.parseInt(sizes[3]), latencies, timedOut);
  }

  private static String field(Map<String, String> stats, String name) {
    String v = stats.get(name);
    if (v == null) {
      throw new BenchException("dnsperf printed no '" + name + "' line");
    }
    return v;
  }

  private static long firstLong(String s) {
    return Long.parseLong(s.split("\\s+")[0]);
  }

  private static double millis(String seconds) {
    return Double.parseDouble(seconds) * 1000.0;
  }

  /** {@code NOERROR 88733 (100.00%)} or {@code NOERROR 50 (50.00%), NXDOMAIN 50 (50.00%)}. */
  private static Map<String, Long> rcodes(String s) {
    Map<String, Long> out = new LinkedHashMap<>();
    for (String part : s.split(",")) {
      String[] f = part.trim().split("\\s+");
      if (f.length >= 2) {
        out.put(f[0], Long.parseLong(f[1]));
      }
    }
    return out;
  }
}
