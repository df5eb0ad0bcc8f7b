package dev.muster.lab.sim;

import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Locale;
import java.util.OptionalDouble;
import java.util.Set;

/**
 * {@code muster sim ttl}'s text and CSV. The text keeps seed 003's layout (its {@code TTL=15s  P50=12.5s  P99=15.0s}
 * lines and its {@code %-6.1f %-10.0f %-14.2f %-14.0f} columns) and adds, to the right, what the seed leaves out:
 * the delay's maximum, the write load, the standard error, the exact value and the hits. Stateless.
 */
public final class TtlTable {
  static final String CSV_HEADER = "model,ttl_s,interval_s,sigma,delay_p50_s,delay_p99_s,delay_max_s,"
      + "exact_delay_p50_s,exact_delay_p99_s,samples,hits,false_removals_per_day,se_per_day,exact_per_day,"
      + "false_removals_per_year";

  private TtlTable() {}

  public static String text(TtlReport report) {
    TtlSimConfig c = report.config();
    StringBuilder sb = new StringBuilder();
    sb.append(f("muster sim ttl, seed %d: %d pause samples per row, %d delay samples per TTL; %d instances, %s pauses"
        + " per instance per day, lognormal with median %s; P50/P99/max of the samples, then the exact values%n", c.seed(), c.samples(), c.delaySamples(), c.instances(),
        number(c.pausesPerDay()), Sims.format(c.pauseMedian())));

    sb.append(f("%nseed 003's model: heartbeat %s; a crash is removed at its last heartbeat + TTL; a pause longer than"
        + " the TTL is a false removal%n", Sims.format(c.heartbeat())));
    appendDelays(sb, report.rows(TtlReport.SEED_MODEL), "heartbeat", c.instances());
    appendRemovals(sb, report, TtlReport.SEED_MODEL);

    sb.append(f("%nMuster's model: keepalive %s; etcd removes at the last renewal + TTL, at its next %s expiry scan;"
        + " %s leader changes per day (each resets every lease to TTL + %s from then); a pause longer than what is left of"
        + " the lease (TTL − phase) is a false removal; the same pauses as above%n",
        c.keepalive().map(Sims::format).orElse("TTL/3"), Sims.format(MusterModel.EXPIRY_SCAN),
        number(c.leaderChangesPerDay()), Sims.format(MusterModel.ELECTION_TIMEOUT)));
    appendDelays(sb, report.rows(TtlReport.MUSTER_MODEL), "keepalive", c.instances());
    appendRemovals(sb, report, TtlReport.MUSTER_MODEL);
    return sb.toString();
  }

  /** One header line and one line per row, {@link #CSV_HEADER}'s columns; seconds and rates as plain decimals. */
  public static String csv(TtlReport report) {
    StringBuilder sb = new StringBuilder(CSV_HEADER).append('\n');
    for (TtlRow r : report.rows()) {
      RemovalEstimate e = r.removals();
      OptionalDouble exact = e.exactPerDay();
      sb.append(String.join(",", r.model(), number(Sims.seconds(r.ttl())), number(Sims.seconds(r.interval())),
          number(r.sigma()), decimals(r.delay().p50()), decimals(r.delay().p99()), decimals(r.delay().max()),
          r.delay().exact().map(x -> decimals(x.p50())).orElse(""),
          r.delay().exact().map(x -> decimals(x.p99())).orElse(""), Long.toString(e.samples()), Long.toString(e.hits()), f("%.6f", e.perDay()),
          f("%.6f", e.standardErrorPerDay()), exact.isPresent() ? f("%.6f", exact.getAsDouble()) : "",
          f("%.3f", e.perYear()))).append('\n');
    }
    return sb.toString();
  }

  private static void appendDelays(StringBuilder sb, List<TtlRow> rows, String renewal, int instances) {
    Set<Duration> printed = new HashSet<>();
    for (TtlRow r : rows) {
      if (!printed.add(r.ttl())) {
        continue; // one delay per TTL; the sigma rows repeat it
      }
      double interval = Sims.seconds(r.interval());
      String exact = r.delay().exact().map(e -> f("exact %.2f/%.2f/%.2fs", Sims.seconds(e.p50()),
          Sims.seconds(e.p99()), Sims.seconds(e.max()))).orElse("exact -");
      sb.append(f("TTL=%ss  P50=%.1fs  P99=%.1fs  max=%.1fs  (%s)  %s %s: %s writes/s%n",
          number(Sims.seconds(r.ttl())), Sims.seconds(r.delay().p50()), Sims.seconds(r.delay().p99()),
          Sims.seconds(r.delay().max()), exact, renewal, Sims.format(r.interval()),
          number(round1(instances / interval))));
    }
  }

  private static void appendRemovals(StringBuilder sb, TtlReport report, String model) {
    boolean vsSeed = model.equals(TtlReport.MUSTER_MODEL);
    sb.append('\n').append(f("%-6s %-10s %-14s %-14s %-10s %-10s %-9s%s", "sigma", "TTL", "per day", "per year",
        "±SE/day", "exact/day", "hits", vsSeed ? "× seed" : "").stripTrailing()).append('\n');
    List<String> zeroHits = new ArrayList<>();
    for (TtlRow r : report.rows(model)) {
      RemovalEstimate e = r.removals();
      OptionalDouble exact = e.exactPerDay();
      String ratio = vsSeed ? report.row(TtlReport.SEED_MODEL, r.ttl(), r.sigma()).map(s -> ratio(e, s.removals()))
          .orElse("-") : "";
      sb.append(f("%-6.1f %-10s %-14.2f %-14.0f %-10.3f %-10s %-9d%s", r.sigma(), number(Sims.seconds(r.ttl())),
          e.perDay(), e.perYear(), e.standardErrorPerDay(), exact.isPresent() ? f("%.4f", exact.getAsDouble()) : "-",
          e.hits(), ratio).stripTrailing()).append('\n');
      if (e.hits() == 0) {
        zeroHits.add(f("sigma %.1f TTL %ss", r.sigma(), number(Sims.seconds(r.ttl()))));
      }
    }
    if (!zeroHits.isEmpty()) {
      sb.append(f("0 hits (%s): the rate is below %.4f per day at 95 %% (3/n); the exact column is the figure%n",
          String.join(", ", zeroHits), report.rows(model).get(0).removals().upperBound95PerDay()));
    }
  }

  /** Muster's removals over the seed's on the same pauses: exact over exact when both have it. */
  private static String ratio(RemovalEstimate muster, RemovalEstimate seed) {
    if (muster.exactProbability().isPresent() && seed.exactProbability().isPresent()
        && seed.exactProbability().getAsDouble() > 0) {
      return f("%.2f", muster.exactProbability().getAsDouble() / seed.exactProbability().getAsDouble());
    }
    return seed.hits() == 0 ? "-" : f("%.2f", muster.probability() / seed.probability());
  }

  private static double round1(double x) {
    return Math.round(x * 10) / 10.0;
  }

  /** 15 for 15.0, 1.5 for 1.5: how a person writes a TTL or a rate in a table. */
  static String number(double x) {
    return x == Math.rint(x) && Math.abs(x) < 1e15 ? Long.toString((long) x)
        : new java.math.BigDecimal(Double.toString(x)).stripTrailingZeros().toPlainString();
  }

  private static String decimals(Duration d) {
    return f("%.4f", Sims.seconds(d));
  }

  private static String f(String format, Object... args) {
    return String.format(Locale.ROOT, format, args);
  }
}
