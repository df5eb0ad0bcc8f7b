package dev.muster.bench;

import java.io.PrintStream;
import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.Map;
import java.util.regex.Pattern;
import org.openjdk.jmh.profile.GCProfiler;
import org.openjdk.jmh.results.Result;
import org.openjdk.jmh.results.RunResult;
import org.openjdk.jmh.runner.Runner;
import org.openjdk.jmh.runner.RunnerException;
import org.openjdk.jmh.runner.options.ChainedOptionsBuilder;
import org.openjdk.jmh.runner.options.OptionsBuilder;
import org.openjdk.jmh.runner.options.TimeValue;
import org.openjdk.jmh.runner.options.VerboseMode;

/**
 * Runs the four JMH benchmark classes (pick, the gRPC policy's pick, apply, decode) through JMH's own runner, one fork each, with the
 * GC profiler for bytes allocated per operation, and returns one {@link Row} per benchmark and parameter set.
 * The error is
 * JMH's 99.9 % interval; with one fork on two noisy cores it is wide, which is why ratios within one run are the
 * result, not absolute figures.
 *
 * <p>Runs on the calling thread (JMH forks its own JVMs, one at a time).
 */
public final class JmhSuite {
  /** One benchmark with one parameter set. */
  public record Row(String benchmark, String params, int threads, double nsPerOp, double error, double bytesPerOp) {}

  /** One JMH run: {@code type}'s methods matching {@code methods}, with {@code policies} for the pick. */
  private record Part(String label, Class<?> type, String methods, String[] policies) {
    String include() {
      return "^" + Pattern.quote(type.getName() + ".") + methods;
    }
  }

  private JmhSuite() {}

  /**
   * Quick: power of two only (the default policy) for pick, the gRPC pick on one thread only, and decode only, 2 × 0.5 s warm-up and 3 × 0.5 s
   * measurement (about 40 s); full: every policy, decode and encode, 3 × 1 s and 5 × 1 s (about 4 minutes).
   */
  public static List<Row> run(boolean quick, PrintStream progress) {
    List<Part> parts = List.of(
        new Part("pick()", PickBenchmark.class, "",
            quick ? new String[] {"POWER_OF_TWO"} : new String[] {"ROUND_ROBIN", "WEIGHTED_RANDOM", "POWER_OF_TWO"}),
        new Part("gRPC muster policy pick", GrpcPickBenchmark.class,
            quick ? "pick(FirstAttempt|RetryAvoiding)$" : "", null),
        new Part("apply a revision", ApplyBenchmark.class, "", null),
        new Part("decode a value", DecodeBenchmark.class, quick ? "decode$" : "", null),
        new Part("sign and verify a record", SignatureBenchmark.class, quick ? "verifyRecord$" : "", null),
        new Part("a first set of 10,000 records, signed and not", SignedResyncBenchmark.class, "", null));
    List<Row> rows = new ArrayList<>();
    for (Part part : parts) {
      progress.printf("jmh: %s (%s)...%n", part.label(), quick ? "quick: 1 fork, 2 + 3 x 0.5 s"
          : "1 fork, 3 x 1 s warm-up, 5 x 1 s");
      ChainedOptionsBuilder options = new OptionsBuilder()
          .include(part.include())
          .forks(1)
          .warmupIterations(quick ? 2 : 3)
          .warmupTime(quick ? TimeValue.milliseconds(500) : TimeValue.seconds(1))
          .measurementIterations(quick ? 3 : 5)
          .measurementTime(quick ? TimeValue.milliseconds(500) : TimeValue.seconds(1))
          .addProfiler(GCProfiler.class)
          .verbosity(VerboseMode.SILENT);
      if (part.policies() != null) {
        options.param("policy", part.policies());
      }
      Collection<RunResult> results;
      try {
        results = new Runner(options.build()).run();
      } catch (RunnerException e) {
        throw new IllegalStateException("JMH could not run " + part.label() + ": " + e.getMessage(), e);
      }
      for (RunResult r : results) {
        rows.add(row(r));
      }
    }
    return rows;
  }

  private static Row row(RunResult r) {
    var params = r.getParams();
    String name = params.getBenchmark().substring(params.getBenchmark().lastIndexOf('.', params.getBenchmark()
        .lastIndexOf('.') - 1) + 1);
    StringBuilder p = new StringBuilder();
    for (String key : params.getParamsKeys()) {
      p.append(p.length() == 0 ? "" : " ").append(key).append('=').append(params.getParam(key));
    }
    Result<?> primary = r.getPrimaryResult();
    Map<String, Result> secondary = r.getSecondaryResults();
    Result<?> alloc = secondary.get("gc.alloc.rate.norm");
    double toNanos = switch (primary.getScoreUnit()) { // a one-shot benchmark reports in its own unit
      case "s/op" -> 1e9;
      case "ms/op" -> 1e6;
      case "us/op" -> 1e3;
      default -> 1;
    };
    return new Row(name, p.toString(), params.getThreads(), primary.getScore() * toNanos,
        primary.getScoreError() * toNanos, alloc == null ? Double.NaN : alloc.getScore());
  }
}
