package dev.muster.call;

/** Whether a call may safely run twice. Only {@code YES} calls are ever retried. */
public enum Idempotent {
  /** Running it twice has the effect of running it once (GET, PUT of a whole value, a read-only RPC). */
  YES,
  /** Never retried, whatever the failure: a second run could repeat a side effect. */
  NO
}
