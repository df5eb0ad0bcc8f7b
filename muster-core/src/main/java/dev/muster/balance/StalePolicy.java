package dev.muster.balance;

/**
 * What a consumer does once its cache has been stale for longer than {@link BalancerConfig#maxStale()} (seed 001's
 * drill: serve 30 s of etcd outage from the cache, then refuse new resolutions while existing connections go on).
 */
public enum StalePolicy {
  /**
   * No new picks: a call fails at once with "registry unreachable for 31 s, over maxStale 30 s". Calls and
   * connections already under way are left to finish.
   */
  FAIL_CLOSED,
  /**
   * Keep calling, but only endpoints whose last attempt succeeded within {@code maxStale}; an endpoint that fails
   * is out at once. If none qualifies, every endpoint of the last set is used.
   */
  KEEP_FAILING_ENDPOINTS_OUT
}
