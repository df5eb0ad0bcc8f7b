package dev.muster.cache.internal;

import dev.muster.cache.EndpointDelta;
import dev.muster.cache.EndpointListener;
import dev.muster.cache.EndpointSet;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.concurrent.Executor;
import java.util.concurrent.RejectedExecutionException;
import java.util.function.Consumer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Hands one cache's publications to its listeners so that the {@link EndpointListener} contract holds for every
 * listener, whenever it was added: exactly one {@link EndpointDelta.Kind#SNAPSHOT} first, then every later change
 * once, in revision order.
 *
 * <p>Threading: every method only enqueues a task on {@code executor}, which must run tasks one at a time in
 * submission order (a single-thread executor: the cache's notifier thread). The listener list and the last
 * delivered set are read and written by those tasks alone. That one queue is what orders an added listener
 * against the publications around it: its catch-up snapshot is the set of the last publication <em>delivered</em>
 * before it (not the cache's newest set, which the loop thread may already have moved past), and every publication
 * queued after it reaches it once. Adding a listener from inside a listener is fine: it is added by the next task.
 * {@link #publish} and the other inputs are called on the cache's loop thread, in revision order.
 */
public final class CacheNotifier {
  private static final Logger log = LoggerFactory.getLogger(CacheNotifier.class);

  private final Executor executor;
  private final String service;

  // Notifier thread only.
  private final List<EndpointListener> listeners = new ArrayList<>();
  private EndpointSet delivered; // null until the first publication
  private Instant staleSince; // null while fresh
  private String staleReason;
  private dev.muster.MusterException failure; // null unless the cache stopped for good

  /** {@code executor} runs one task at a time, in order; {@code service} names the cache in log lines. */
  public CacheNotifier(Executor executor, String service) {
    this.executor = Objects.requireNonNull(executor, "executor");
    this.service = Objects.requireNonNull(service, "service");
  }

  /**
   * Adds a listener. If a set was already delivered it first gets that set as a SNAPSHOT (and {@code onStale} if
   * the cache is stale), then every later change. Throws {@link IllegalStateException} once the cache is closed.
   */
  public void add(EndpointListener listener) {
    Objects.requireNonNull(listener, "listener");
    try {
      executor.execute(() -> {
        listeners.add(listener);
        if (delivered != null) {
          EndpointSet set = delivered;
          call(listener, l -> l.onChange(set, EndpointDelta.between(EndpointDelta.Kind.SNAPSHOT, EndpointSet.EMPTY,
              set)));
          if (staleSince != null) {
            Instant since = staleSince;
            String reason = staleReason;
            call(listener, l -> l.onStale(set, since, reason));
          }
        }
        if (failure != null) {
          dev.muster.MusterException why = failure;
          EndpointSet set = delivered == null ? EndpointSet.EMPTY : delivered;
          call(listener, l -> l.onFailed(set, why));
        }
      });
    } catch (RejectedExecutionException e) {
      throw new IllegalStateException("the endpoint cache of " + service + " is closed: add listeners before"
          + " closing it", e);
    }
  }

  /** A new set; called on the loop thread in revision order. */
  public void publish(EndpointSet set, EndpointDelta delta) {
    enqueue(() -> {
      delivered = set;
      listeners.forEach(l -> call(l, x -> x.onChange(set, delta)));
    });
  }

  /** The cache became stale and keeps serving {@code set}. */
  public void stale(EndpointSet set, Instant since, String reason) {
    enqueue(() -> {
      staleSince = since;
      staleReason = reason;
      listeners.forEach(l -> call(l, x -> x.onStale(set, since, reason)));
    });
  }

  /** The cache is watching again after {@code staleFor}. */
  public void recovered(EndpointSet set, Duration staleFor) {
    enqueue(() -> {
      staleSince = null;
      staleReason = null;
      listeners.forEach(l -> call(l, x -> x.onRecovered(set, staleFor)));
    });
  }

  /** The cache stopped for good (etcd refused it) and keeps serving {@code set}. */
  public void failed(EndpointSet set, dev.muster.MusterException why) {
    enqueue(() -> {
      failure = why;
      listeners.forEach(l -> call(l, x -> x.onFailed(set, why)));
    });
  }

  private void enqueue(Runnable task) {
    try {
      executor.execute(task);
    } catch (RejectedExecutionException e) {
      // the cache is closed: nobody is listening any more
    }
  }

  private void call(EndpointListener l, Consumer<EndpointListener> call) {
    try {
      call.accept(l);
    } catch (RuntimeException e) {
      log.warn("a listener of the endpoint cache of {} threw; ignored", service, e);
    }
  }
}
