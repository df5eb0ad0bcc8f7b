package dev.muster.bench.support;

/** The names both sides of the comparison record their figures under (see {@link SideResult}). */
public final class Metric {
  private Metric() {}

  /** register() → visible in all {@code n} consumer caches, ms. */
  public static String visible(int n) {
    return "visible.N" + n;
  }

  /** graceful close/unregister → gone from all {@code n} consumer caches, ms. */
  public static String gone(int n) {
    return "gone.N" + n;
  }

  /** How long register() (the floor: the put) took to return with {@code n} caches watching, ms. */
  public static String visibleCall(int n) {
    return "visible.call.N" + n;
  }

  /** How long close() (the floor: the revoke) took to return with {@code n} caches watching, ms. */
  public static String goneCall(int n) {
    return "gone.call.N" + n;
  }

  /** SIGKILL of a provider process → gone from a consumer cache, ms. */
  public static final String KILL9_GONE = "kill9.gone";

  /** The part of {@link #KILL9_GONE} etcd had to wait by contract: last renewal + TTL − kill, ms (Muster only). */
  public static final String KILL9_REMAINDER = "kill9.lease.remainder";

  /** The rest of {@link #KILL9_GONE}: expiry detection by etcd, the delete's delivery and apply, ms. */
  public static final String KILL9_DETECTION = "kill9.detection.delivery";

  /** Building a cache of {@link Plan#bulkInstances()} instances from nothing, ms (Muster: range + build + publish). */
  public static final String BUILD = "build";

  /** Updates applied per second by one cache holding {@link Plan#bulkInstances()} instances (a value). */
  public static final String EVENTS_PER_SECOND = "events.per.second";

  /** Retained heap per cached instance, bytes (a value). */
  public static final String HEAP_PER_INSTANCE = "heap.per.instance";

  /** Calls the caller made in the kill -9 windows (a value). */
  public static final String CALLS = "kill9.calls";

  /** Calls that failed as the caller saw them in the kill -9 windows (a value). */
  public static final String CALLS_FAILED = "kill9.calls.failed";
}
