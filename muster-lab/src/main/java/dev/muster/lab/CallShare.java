package dev.muster.lab;

import com.fasterxml.jackson.databind.JsonNode;
import dev.muster.testing.JsonLog;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;

/**
 * How much of a consumer's traffic went to one instance, second by second: of the calls that started in each full
 * second after {@code from}, the share (in percent) whose attempts include the instance. A call with no attempt (no
 * endpoint) counts in the denominator; a second in which no call started has no share (null).
 */
public final class CallShare {
  private CallShare() {}

  /** The share of {@code id} in each of the {@code seconds} seconds from {@code from}, in percent, 0.1 precision. */
  public static List<Double> perSecond(List<JsonNode> calls, String id, Instant from, int seconds) {
    long[] all = new long[seconds];
    long[] to = new long[seconds];
    for (JsonNode c : calls) {
      Instant t = JsonLog.ts(c);
      if (t.isBefore(from)) {
        continue;
      }
      long second = java.time.Duration.between(from, t).toSeconds();
      if (second >= seconds) {
        continue;
      }
      all[(int) second]++;
      for (JsonNode a : c.path("attempts")) {
        if (a.asText().equals(id)) {
          to[(int) second]++;
          break;
        }
      }
    }
    List<Double> out = new ArrayList<>(seconds);
    for (int i = 0; i < seconds; i++) {
      out.add(all[i] == 0 ? null : Math.round(1000.0 * to[i] / all[i]) / 10.0);
    }
    return out;
  }

  /** The mean of the non-null values of {@code shares} in {@code [from, to)}, or NaN when there is none. */
  public static double mean(List<Double> shares, int from, int to) {
    double sum = 0;
    int n = 0;
    for (int i = Math.max(0, from); i < Math.min(to, shares.size()); i++) {
      if (shares.get(i) != null) {
        sum += shares.get(i);
        n++;
      }
    }
    return n == 0 ? Double.NaN : sum / n;
  }
}
