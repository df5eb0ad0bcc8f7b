/**
 * Choosing an endpoint for each attempt (SPEC §5): a {@link dev.muster.balance.Balancer} per service holds one
 * {@link dev.muster.balance.EndpointState} per endpoint (load, latency EWMA, ejection state) and an immutable picker
 * that is rebuilt off the hot path, so that {@code pick()} is a lock-free, allocation-free read. Policies: round
 * robin, weighted random, power of two choices; zone preference with fallback; panic routing when nothing is
 * available. Ejection itself lives in {@link dev.muster.outlier}.
 */
package dev.muster.balance;
