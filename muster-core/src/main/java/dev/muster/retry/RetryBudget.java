package dev.muster.retry;

import java.time.Duration;
import java.util.Objects;
import java.util.function.LongSupplier;

/*
 * Finagle's retry budget (TokenRetryBudget over a LeakyBucket), in integer tokens where one retry costs 1000:
 *
 *  - every request deposits percentCanRetry * 1000 tokens; every retry withdraws 1000, only if the balance allows;
 *  - deposits and withdrawals live in a ring of SLOTS buckets spanning `ttl`; when time moves past a bucket, its
 *    entries expire together, so the window is `ttl` to within one bucket (ttl / SLOTS, 1 s for the default 10 s);
 *  - a reserve of minRetriesPerSecond * ttl retries is always added to the balance, so a quiet service can still
 *    retry, and in any window of `ttl`:  retries <= percentCanRetry * requests + minRetriesPerSecond * ttl.
 *
 * When most endpoints are bad and every call wants a retry, retries are held at about 20 % of the traffic instead
 * of doubling it: the retry storm that turns a partial outage into a total one does not start.
 */
/**
 * Caps retries at a share of the requests over a sliding window, plus a small floor (SPEC §5, Finagle's shape): call
 * {@link #deposit()} once per request and {@link #tryWithdraw()} before each retry.
 *
 * <p>Thread-safe: each method takes a short lock on this object (no I/O, no callbacks under it). The counters may be
 * read from any thread without it.
 */
public final class RetryBudget {
  private static final long RETRY_COST = 1000;
  private static final int SLOTS = 10;

  private final LongSupplier nanoTime;
  private final long depositAmount;
  private final long reserve;
  private final long slotNanos;
  private final long originNanos;
  private final long[] slots = new long[SLOTS];
  private long currentSlot; // absolute slot number since origin; guarded by this

  private volatile long deposits;
  private volatile long withdrawals;
  private volatile long refused;

  /** The budget described by {@code config}'s {@code budget*} values, on {@code nanoTime}. */
  public RetryBudget(RetryConfig config, LongSupplier nanoTime) {
    this(config.budgetTtl(), config.budgetPercentCanRetry(), config.budgetMinRetriesPerSecond(), nanoTime);
  }

  private RetryBudget(Duration ttl, double percentCanRetry, int minRetriesPerSecond, LongSupplier nanoTime) {
    this.nanoTime = Objects.requireNonNull(nanoTime, "nanoTime");
    this.depositAmount = Math.round(percentCanRetry * RETRY_COST);
    this.reserve = Math.round(minRetriesPerSecond * (ttl.toNanos() / 1e9)) * RETRY_COST;
    this.slotNanos = Math.max(1, ttl.toNanos() / SLOTS);
    this.originNanos = nanoTime.getAsLong();
  }

  /** One request was made (whether or not it will need a retry). */
  public synchronized void deposit() {
    advance();
    slots[(int) (currentSlot % SLOTS)] += depositAmount;
    deposits++;
  }

  /** Asks for one retry: true (and charged) if the budget allows it; false is counted in {@link #refused()}. */
  public synchronized boolean tryWithdraw() {
    advance();
    if (balanceLocked() < RETRY_COST) {
      refused++;
      return false;
    }
    slots[(int) (currentSlot % SLOTS)] -= RETRY_COST;
    withdrawals++;
    return true;
  }

  /** Retries the budget would allow right now. */
  public synchronized long available() {
    advance();
    return balanceLocked() / RETRY_COST;
  }

  /** Requests deposited so far. */
  public long deposits() {
    return deposits;
  }

  /** Retries allowed so far. */
  public long withdrawals() {
    return withdrawals;
  }

  /** Retries refused so far. */
  public long refused() {
    return refused;
  }

  private long balanceLocked() {
    long sum = reserve;
    for (long s : slots) {
      sum += s;
    }
    return sum;
  }

  /** Moves the ring to the current slot, emptying the buckets it passes (they fell out of the window). */
  private void advance() {
    long slot = Math.max(0, nanoTime.getAsLong() - originNanos) / slotNanos;
    long steps = Math.min(slot - currentSlot, SLOTS);
    for (long k = 1; k <= steps; k++) {
      slots[(int) ((currentSlot + k) % SLOTS)] = 0;
    }
    currentSlot = Math.max(currentSlot, slot);
  }

  @Override
  public String toString() {
    return "RetryBudget[" + deposits + " requests, " + withdrawals + " retries, " + refused + " refused]";
  }
}
