package dev.muster.call;

import dev.muster.registry.Instance;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;

/**
 * One try of a call against one endpoint, implemented by a transport (the HTTP adapter) or a test.
 *
 * <p>Contract for implementers:
 * <ul>
 *   <li>{@link #run} must not block: it is called on the thread that called {@link dev.muster.client.MusterClient#call} for the first
 *       attempt (for a {@link dev.muster.client.MusterClient} call that waited for the first set, the cache's
 *       notifier, on a delivery-pool thread), and for a retry on whichever thread completed the previous attempt
 *       (a transport thread, or the engine's timeout scheduler).
 *   <li>Complete the future with an {@link AttemptResult} that maps the transport's result: connection refused,
 *       reset or a timeout to {@code LOCAL_ORIGIN_FAILURE}, status 500 or more to {@code HTTP_5XX}, anything else
 *       to {@code SUCCESS}. A future completed exceptionally, a thrown exception and a null all count as
 *       {@code LOCAL_ORIGIN_FAILURE}.
 *   <li>Apply {@code timeout} to the request. The engine enforces it too: when it passes first, the attempt counts as
 *       a {@code LOCAL_ORIGIN_FAILURE} ({@link java.util.concurrent.TimeoutException}), and the engine calls
 *       {@code cancel(false)} on the returned future: abort the request then. A result after that is ignored.
 * </ul>
 */
@FunctionalInterface
public interface Attempt<T> {
  CompletableFuture<AttemptResult<T>> run(Instance target, Duration timeout);
}
