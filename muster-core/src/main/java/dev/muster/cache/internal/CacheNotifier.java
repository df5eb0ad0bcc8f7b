package dev.muster.cache.internal;

import dev.muster.cache.EndpointDelta;
import dev.muster.cache.EndpointListener;
import dev.muster.cache.EndpointSet;
import dev.muster.registry.InstanceKey;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Objects;
import java.util.Set;
import java.util.concurrent.Executor;
import java.util.concurrent.RejectedExecutionException;
import java.util.function.Consumer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Hands one cache's publications to its listeners so that the {@link EndpointListener} contract holds for every
 * listener, whenever it was added: exactly one {@link EndpointDelta.Kind#SNAPSHOT} first, then every later change,
 * in revision order, each reflected once.
 *
 * <p>Threading: every method only enqueues a task on {@code executor}, which must run tasks one at a time in
 * submission order (the cache's notifier: a sequential executor). The listener list and the last delivered set are
 * read and written by those tasks alone. That one queue is what orders an added listener against the publications
 * around it: its catch-up snapshot is the set of the last publication <em>delivered</em> before it (not the cache's
 * newest set, which the loop may already have moved past), and every publication queued after it reaches it.
 * Adding a listener from inside a listener is fine: it is added by the next task. {@link #publish} and the other
 * inputs are called on the cache's loop, in revision order.
 *
 * <h2>Coalescing (issue 19 §4)</h2>
 * When listeners fall behind (more than {@link #MAX_BEHIND} publications queued and not yet started), the next
 * publication does not queue: it is merged into the newest queued one, which from then on carries the newest set
 * and the combined delta (from the set before it to the newest set). So:
 * <ul>
 *   <li>a listener is never more than {@link #MAX_BEHIND} publications behind, plus the one it is handling, and
 *       what it receives is always a set the cache published, never an older one;
 *   <li>a SNAPSHOT is never merged away: a SNAPSHOT that absorbs later publications is delivered as a SNAPSHOT of
 *       the newer set; otherwise a RESYNC among them makes the merge a RESYNC, else it is an UPDATE;
 *   <li>nothing merges across a stale, recovered or failed notice: only into the newest queued task, and only
 *       while it is a publication. A publication may merge into one queued before a listener's catch-up: the
 *       catch-up reads the delivered set when it runs, so the new listener has it in its SNAPSHOT.
 * </ul>
 * The cost: a merge records the keys the new delta touched (O(changed)); the combined delta is computed once, when
 * its delivery starts, from those keys (O(touched keys × log n)). Without a backlog nothing is merged.
 */
public final class CacheNotifier {
  private static final Logger log = LoggerFactory.getLogger(CacheNotifier.class);

  /** How many publications may wait for listeners before the newest ones are merged. */
  public static final int MAX_BEHIND = 8;

  private final Executor executor;
  private final String service;
  private final int maxBehind;

  // Guarded by this: the publications queued and not started, and the newest queued task if it is one of them.
  private int behind;
  private Delivery tail;
  /** The set of the newest publication queued (the loop's view), or null before the first. */
  private EndpointSet lastQueued;

  // The notifier's tasks only.
  private final List<EndpointListener> listeners = new ArrayList<>();
  private EndpointSet delivered; // null until the first publication
  private Instant staleSince; // null while fresh
  private String staleReason;
  private dev.muster.MusterException failure; // null unless the cache stopped for good

  /** {@code executor} runs one task at a time, in order; {@code service} names the cache in log lines. */
  public CacheNotifier(Executor executor, String service) {
    this(executor, service, MAX_BEHIND);
  }

  /** As the public constructor, merging beyond {@code maxBehind} queued publications (for tests). */
  CacheNotifier(Executor executor, String service, int maxBehind) {
    this.executor = Objects.requireNonNull(executor, "executor");
    this.service = Objects.requireNonNull(service, "service");
    if (maxBehind < 1) {
      throw new IllegalArgumentException("maxBehind " + maxBehind + " < 1");
    }
    this.maxBehind = maxBehind;
  }

  /**
   * Adds a listener. If a set was already delivered it first gets that set as a SNAPSHOT (and {@code onStale} if
   * the cache is stale), then every later change. Throws {@link IllegalStateException} once the cache is closed.
   */
  public void add(EndpointListener listener) {
    Objects.requireNonNull(listener, "listener");
    // No need to stop merges here: a publication merged into one queued before this task is in the set this task
    // hands the new listener as its catch-up, since that set is read when the task runs.
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

  /**
   * Removes a listener: no delivery queued after this call reaches it (one already running or queued before may).
   * A no-op for a listener not added, or once the cache is closed.
   */
  public void remove(EndpointListener listener) {
    Objects.requireNonNull(listener, "listener");
    try {
      executor.execute(() -> listeners.remove(listener));
    } catch (RejectedExecutionException e) {
      // closed: nothing will be delivered any more
    }
  }

  /** Publications queued and not yet started: how far behind the listeners are. From any thread. */
  public synchronized int backlog() {
    return behind;
  }

  /** A new set; called on the loop in revision order. Merged into the newest queued one when listeners lag. */
  public void publish(EndpointSet set, EndpointDelta delta) {
    Delivery delivery;
    synchronized (this) {
      EndpointSet before = lastQueued == null ? EndpointSet.EMPTY : lastQueued;
      lastQueued = set;
      if (tail != null && behind >= maxBehind) {
        tail.merge(set, delta);
        return;
      }
      delivery = new Delivery(before, set, delta);
      tail = delivery;
      behind++;
    }
    try {
      executor.execute(delivery);
    } catch (RejectedExecutionException e) {
      // the cache is closed: nobody is listening any more
    }
  }

  /**
   * One publication on its way to the listeners, or several merged (see the class comment). Its fields change under
   * the notifier's lock until it starts; from then on they are its task's alone.
   */
  private final class Delivery implements Runnable {
    private final EndpointSet before;
    private EndpointSet set;
    private EndpointDelta delta;
    /** The keys the merged deltas touched; null while nothing was merged (then {@link #delta} is exact). */
    private Set<InstanceKey> touched;
    private EndpointDelta.Kind kind;

    Delivery(EndpointSet before, EndpointSet set, EndpointDelta delta) {
      this.before = before;
      this.set = set;
      this.delta = delta;
      this.kind = delta.kind();
    }

    /** Under the notifier's lock: absorbs the next publication. */
    void merge(EndpointSet newer, EndpointDelta next) {
      if (touched == null) {
        touched = new HashSet<>();
        addKeys(delta);
      }
      addKeys(next);
      set = newer;
      delta = null;
      if (kind != EndpointDelta.Kind.SNAPSHOT && next.kind() != EndpointDelta.Kind.UPDATE) {
        kind = next.kind() == EndpointDelta.Kind.SNAPSHOT ? EndpointDelta.Kind.SNAPSHOT : EndpointDelta.Kind.RESYNC;
      }
    }

    private void addKeys(EndpointDelta d) {
      d.added().forEach(i -> touched.add(i.key()));
      d.removed().forEach(i -> touched.add(i.key()));
      d.changed().forEach(i -> touched.add(i.key()));
    }

    @Override
    public void run() {
      EndpointSet now;
      synchronized (CacheNotifier.this) {
        if (tail == this) {
          tail = null; // from here on nothing merges into this one: its fields are this thread's
        }
        behind--;
        now = set;
      }
      // Outside the lock, so the loop's next publish never waits for it.
      EndpointDelta change = touched == null ? delta : EndpointDelta.between(kind, before, now, touched);
      delivered = now;
      listeners.forEach(l -> call(l, x -> x.onChange(now, change)));
    }
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
    synchronized (this) {
      tail = null; // nothing merges across this notice
    }
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
