/**
 * Retry policy (SPEC §5): {@link dev.muster.retry.RetryConfig} (how many retries, each attempt's timeout) and the
 * {@link dev.muster.retry.RetryBudget} that keeps retries to a share of the traffic.
 */
package dev.muster.retry;
