/**
 * The transport-independent call engine (SPEC §5). A transport implements {@link dev.muster.call.Attempt} (one try
 * against one {@link dev.muster.registry.Instance}, mapped to an {@link dev.muster.outlier.Outcome}); the engine
 * (internal) picks endpoints through a {@link dev.muster.balance.Balancer}, enforces each
 * attempt's deadline, feeds outcomes to the outlier detector and retries idempotent calls on a different endpoint
 * within the {@link dev.muster.retry.RetryBudget}. Events go to {@link dev.muster.call.CallMetrics}.
 * {@link dev.muster.client.MusterClient} wires all of these for one service behind one builder.
 */
package dev.muster.call;
