package dev.muster.bench.scale;

import java.util.List;

/**
 * What etcd's Watch service received over one storm, from {@link WatchSampler}'s readings of its {@code /metrics}
 * (summed over the members): messages received on Watch streams (creates, cancels and progress requests) and
 * streams opened. Rates are per second of wall-clock time between two readings.
 *
 * <p>There is no steady rate to subtract: the caches' progress requests (one per cache after
 * {@code progressInterval}, 10 s, without an event) come in bursts, since the caches of a fleet resumed together,
 * so a window shorter than that interval says nothing about them. Streams opened are watch creates alone.
 *
 * @param messages received from the kill to the last reading (the end of the storm's tail)
 * @param streams opened over the same interval
 * @param peakMessagesPerSecond the busiest second after the kill: the largest rate between two readings about 1 s
 *     apart (the nearest pair at least 1 s apart)
 * @param peakStreamsPerSecond likewise for streams opened
 * @param meanMessagesPerSecond from the last reading before etcd answered to the first one after every cache caught
 *     up: the recovery
 * @param meanStreamsPerSecond likewise for streams opened
 * @param recoverySeconds the length of that interval, as read
 * @param readings how many readings there were
 */
public record WatchLoad(long messages, long streams, double peakMessagesPerSecond,
    double peakStreamsPerSecond, double meanMessagesPerSecond, double meanStreamsPerSecond, double recoverySeconds,
    int readings) {
  /** No readings: every figure unknown. */
  static final WatchLoad NONE = new WatchLoad(-1, -1, Double.NaN, Double.NaN, Double.NaN, Double.NaN, Double.NaN,
      0);

  /**
   * One reading: when it was taken (epoch µs) and the counters accumulated since the sampler's first reading, over
   * every member.
   */
  record Reading(long atMicros, long messages, long streams) {}

  /**
   * The figures of {@code readings} (in time order) for a storm whose member was killed at {@code killedMicros},
   * answered again at {@code answeredMicros}, and after which every cache had caught up at {@code caughtUpMicros}.
   */
  static WatchLoad of(List<Reading> readings, long killedMicros, long answeredMicros, long caughtUpMicros) {
    if (readings.isEmpty()) {
      return NONE;
    }
    Reading first = readings.get(0);
    Reading atKill = lastAtOrBefore(readings, killedMicros, first);
    Reading last = readings.get(readings.size() - 1);
    double peakMessages = Double.NaN;
    double peakStreams = Double.NaN;
    int j = 0;
    for (int i = 1; i < readings.size(); i++) {
      Reading to = readings.get(i);
      while (j + 1 < i && to.atMicros() - readings.get(j + 1).atMicros() >= 1_000_000) {
        j++;
      }
      Reading from = readings.get(j);
      if (to.atMicros() <= killedMicros || to.atMicros() - from.atMicros() < 1_000_000) {
        continue;
      }
      peakMessages = max(peakMessages, rate(from, to, Reading::messages));
      peakStreams = max(peakStreams, rate(from, to, Reading::streams));
    }
    Reading recoveryFrom = lastAtOrBefore(readings, answeredMicros, first);
    Reading recoveryTo = readings.stream().filter(r -> r.atMicros() >= caughtUpMicros).findFirst().orElse(last);
    return new WatchLoad(last.messages() - atKill.messages(), last.streams() - atKill.streams(), peakMessages,
        peakStreams, rate(recoveryFrom, recoveryTo, Reading::messages), rate(recoveryFrom, recoveryTo,
        Reading::streams), (recoveryTo.atMicros() - recoveryFrom.atMicros()) / 1e6, readings.size());
  }

  private static Reading lastAtOrBefore(List<Reading> readings, long micros, Reading otherwise) {
    Reading found = otherwise;
    for (Reading r : readings) {
      if (r.atMicros() > micros) {
        break;
      }
      found = r;
    }
    return found;
  }

  /** Per second between two readings; NaN when they are the same moment. */
  private static double rate(Reading from, Reading to, java.util.function.ToLongFunction<Reading> counter) {
    long micros = to.atMicros() - from.atMicros();
    return micros <= 0 ? Double.NaN : (counter.applyAsLong(to) - counter.applyAsLong(from)) * 1e6 / micros;
  }

  private static double max(double a, double b) {
    return Double.isNaN(a) || b > a ? b : a;
  }
}
