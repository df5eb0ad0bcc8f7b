package dev.muster.console.internal;

import java.util.List;
import java.util.concurrent.atomic.LongAdder;

/**
 * What the console counts as it serves: answers by HTTP status and drains done. Written by the HTTP threads (a
 * {@link LongAdder} increment per answer), read by whoever asks; nothing here allocates on the serving path.
 */
public final class ConsoleCounters {
  /** Every status the console answers with; anything else is counted as {@code other}. */
  public static final List<String> STATUSES =
      List.of("200", "400", "401", "403", "404", "405", "409", "421", "500", "503", "other");

  private final LongAdder[] byStatus = new LongAdder[STATUSES.size()];
  private final LongAdder drains = new LongAdder();

  ConsoleCounters() {
    for (int i = 0; i < byStatus.length; i++) {
      byStatus[i] = new LongAdder();
    }
  }

  void answered(int status) {
    int i = switch (status) {
      case 200 -> 0;
      case 400 -> 1;
      case 401 -> 2;
      case 403 -> 3;
      case 404 -> 4;
      case 405 -> 5;
      case 409 -> 6;
      case 421 -> 7;
      case 500 -> 8;
      case 503 -> 9;
      default -> 10;
    };
    byStatus[i].increment();
  }

  void drained() {
    drains.increment();
  }

  /** Answers sent with {@code status}, one of {@link #STATUSES}. */
  public long answers(String status) {
    int i = STATUSES.indexOf(status);
    if (i < 0) {
      throw new IllegalArgumentException("status " + status + " is not one of " + STATUSES);
    }
    return byStatus[i].sum();
  }

  /** Instances drained from the console. */
  public long drains() {
    return drains.sum();
  }
}
