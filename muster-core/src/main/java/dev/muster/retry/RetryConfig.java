package dev.muster.retry;

import dev.muster.InvalidInputException;
import java.time.Duration;

/**
 * When a failed call may be tried again (SPEC §5). Immutable; start from {@link #defaults()} or {@link #builder()}.
 *
 * @param maxRetries retries after the first attempt, each on a different endpoint, for idempotent calls only
 *     (default 1; 0 to 10)
 * @param attemptTimeout each attempt's own deadline; the call engine enforces it (default 1 s)
 * @param budgetTtl the retry budget's window: deposits and withdrawals count for this long (default 10 s)
 * @param budgetPercentCanRetry retries allowed per request over the window, 0 to 1 (default 0.2)
 * @param budgetMinRetriesPerSecond a floor of retries allowed whatever the traffic, per second of the window
 *     (default 10)
 */
public record RetryConfig(
    int maxRetries,
    Duration attemptTimeout,
    Duration budgetTtl,
    double budgetPercentCanRetry,
    int budgetMinRetriesPerSecond) {

  public static final int MAX_RETRIES_LIMIT = 10;

  public RetryConfig {
    if (maxRetries < 0 || maxRetries > MAX_RETRIES_LIMIT) {
      throw new InvalidInputException("maxRetries", maxRetries, "use 0 to " + MAX_RETRIES_LIMIT);
    }
    positive("attemptTimeout", attemptTimeout);
    positive("budgetTtl", budgetTtl);
    if (budgetTtl.toMillis() < 10) {
      throw new InvalidInputException("budgetTtl", budgetTtl, "use at least 10 ms");
    }
    if (!(budgetPercentCanRetry >= 0.0 && budgetPercentCanRetry <= 1.0)) {
      throw new InvalidInputException("budgetPercentCanRetry", budgetPercentCanRetry, "use a share from 0.0 to 1.0");
    }
    if (budgetMinRetriesPerSecond < 0) {
      throw new InvalidInputException("budgetMinRetriesPerSecond", budgetMinRetriesPerSecond, "use 0 or more");
    }
  }

  /** One retry, 1 s per attempt, budget of 20 % over 10 s plus 10 retries per second. */
  public static RetryConfig defaults() {
    return builder().build();
  }

  /** A builder holding the {@linkplain #defaults() defaults}. */
  public static Builder builder() {
    return new Builder();
  }

  public Builder toBuilder() {
    return new Builder()
        .maxRetries(maxRetries)
        .attemptTimeout(attemptTimeout)
        .budget(budgetTtl, budgetPercentCanRetry, budgetMinRetriesPerSecond);
  }

  private static void positive(String field, Duration d) {
    if (d == null || d.isNegative() || d.isZero()) {
      throw new InvalidInputException(field, d, "use a positive duration");
    }
  }

  /** Builds a {@link RetryConfig}; every value is checked in {@link #build()}. */
  public static final class Builder {
    private int maxRetries = 1;
    private Duration attemptTimeout = Duration.ofSeconds(1);
    private Duration budgetTtl = Duration.ofSeconds(10);
    private double budgetPercentCanRetry = 0.2;
    private int budgetMinRetriesPerSecond = 10;

    private Builder() {}

    public Builder maxRetries(int retries) {
      this.maxRetries = retries;
      return this;
    }

    public Builder attemptTimeout(Duration timeout) {
      this.attemptTimeout = timeout;
      return this;
    }

    /** The retry budget: {@code percentCanRetry} of the requests over {@code ttl}, plus {@code minPerSecond}. */
    public Builder budget(Duration ttl, double percentCanRetry, int minPerSecond) {
      this.budgetTtl = ttl;
      this.budgetPercentCanRetry = percentCanRetry;
      this.budgetMinRetriesPerSecond = minPerSecond;
      return this;
    }

    public RetryConfig build() {
      return new RetryConfig(maxRetries, attemptTimeout, budgetTtl, budgetPercentCanRetry,
          budgetMinRetriesPerSecond);
    }
  }
}
