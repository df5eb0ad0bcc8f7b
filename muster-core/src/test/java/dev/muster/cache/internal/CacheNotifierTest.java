package dev.muster.cache.internal;

import static dev.muster.cache.Endpoints.delete;
import static dev.muster.cache.Endpoints.put;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.muster.cache.EndpointDelta;
import dev.muster.cache.EndpointListener;
import dev.muster.cache.EndpointSet;
import dev.muster.cache.Endpoints;
import dev.muster.registry.Instance;
import dev.muster.registry.InstanceKey;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.Executor;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * The listener contract under concurrency: listeners added from other threads while publications stream in each
 * see exactly one SNAPSHOT first, then every later change once, in revision order (the deltas rebuild every set).
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class CacheNotifierTest {
  private final ExecutorService notifyThread = Executors.newSingleThreadExecutor();
  private final CacheNotifier notifier = new CacheNotifier(notifyThread, Endpoints.SERVICE);

  @AfterEach
  void stop() {
    notifyThread.shutdownNow();
  }

  /** Checks one listener's calls against the contract; records every breach instead of throwing. */
  private static final class ContractCheck implements EndpointListener {
    final List<String> breaches = new ArrayList<>();
    final Map<InstanceKey, Instance> rebuilt = new HashMap<>();
    /** Shared by every listener of one notifier, or null: more than one call in it at once is a breach. */
    private final AtomicInteger inCall;
    long revision = -1;
    int snapshots;
    int calls;

    ContractCheck() {
      this(null);
    }

    ContractCheck(AtomicInteger inCall) {
      this.inCall = inCall;
    }

    @Override
    public void onChange(EndpointSet set, EndpointDelta delta) {
      if (inCall != null && inCall.incrementAndGet() != 1) {
        breaches.add("a call at " + set.revision() + " while another was running");
      }
      try {
        check(set, delta);
      } finally {
        if (inCall != null) {
          inCall.decrementAndGet();
        }
      }
    }

    private void check(EndpointSet set, EndpointDelta delta) {
      calls++;
      if (delta.kind() == EndpointDelta.Kind.SNAPSHOT) {
        snapshots++;
        if (calls != 1) {
          breaches.add("SNAPSHOT at " + set.revision() + " as call " + calls);
        }
        rebuilt.clear();
      } else if (calls == 1) {
        breaches.add(delta.kind() + " at " + set.revision() + " before any SNAPSHOT");
      }
      if (set.revision() <= revision) {
        breaches.add("revision " + set.revision() + " after " + revision);
      }
      revision = set.revision();
      delta.removed().forEach(i -> rebuilt.remove(i.key()));
      delta.added().forEach(i -> rebuilt.put(i.key(), i));
      delta.changed().forEach(i -> rebuilt.put(i.key(), i));
      if (!rebuilt.equals(set.asMap())) {
        breaches.add("the deltas up to " + set.revision() + " do not rebuild its set");
      }
    }
  }

  @Test
  void listenersAddedWhilePublicationsStreamInEachGetOneSnapshotThenEveryLaterChangeInOrder() throws Exception {
    streamWithListenersAddedMeanwhile(notifier, this::drain, null);
  }

  /**
   * The same contract when the notifier's executor hops threads: a sequential executor over a plain pool of four
   * threads, each task its own pool task (as a cache's notifier over the delivery pool or over a
   * {@code CacheConfig.listenerExecutor}). The contract needs one task at a time, in order, each seeing the one
   * before it; never one thread.
   */
  @Test
  void theContractHoldsOverAMultiThreadedExecutorWrappedAsSequential() throws Exception {
    ExecutorService four = Executors.newFixedThreadPool(4);
    try {
      HoppingSequential sequential = new HoppingSequential(four);
      AtomicInteger inCall = new AtomicInteger();
      streamWithListenersAddedMeanwhile(new CacheNotifier(sequential, Endpoints.SERVICE), sequential::drain, inCall);

      assertThat(sequential.threads).as("the tasks ran on several threads, one at a time").hasSizeGreaterThan(1);
    } finally {
      four.shutdownNow();
    }
  }

  /** Runs each task as its own task of {@code pool}, after the one before it: in order, never two at once. */
  private static final class HoppingSequential implements Executor {
    private final ExecutorService pool;
    final Set<String> threads = ConcurrentHashMap.newKeySet();
    private CompletableFuture<Void> tail = CompletableFuture.completedFuture(null);

    HoppingSequential(ExecutorService pool) {
      this.pool = pool;
    }

    @Override
    public synchronized void execute(Runnable task) {
      tail = tail.thenRunAsync(() -> {
        threads.add(Thread.currentThread().getName());
        task.run();
      }, pool);
    }

    void drain() throws Exception {
      CompletableFuture<Void> last;
      synchronized (this) {
        last = tail;
      }
      last.get(30, TimeUnit.SECONDS);
    }
  }

  private interface Drain {
    void run() throws Exception;
  }

  /** 200 listeners added from 4 threads while 3,000 revisions are published; {@code inCall} null: not checked. */
  private static void streamWithListenersAddedMeanwhile(CacheNotifier notifier, Drain drain,
      AtomicInteger inCall) throws Exception {
    int revisions = 3_000;
    int adders = 4;
    int perAdder = 50;
    RevisionApplier applier = new RevisionApplier(Endpoints.LAYOUT, Endpoints.PREFIX);
    ConcurrentLinkedQueue<ContractCheck> checks = new ConcurrentLinkedQueue<>();
    CountDownLatch go = new CountDownLatch(1);
    List<Thread> threads = new ArrayList<>();
    for (int a = 0; a < adders; a++) {
      Random random = new Random(a);
      Thread t = new Thread(() -> {
        await(go);
        for (int i = 0; i < perAdder; i++) {
          ContractCheck check = new ContractCheck(inCall);
          checks.add(check);
          notifier.add(check);
          parkNanos(random.nextInt(200_000));
        }
      }, "adder-" + a);
      threads.add(t);
      t.start();
    }
    Random random = new Random(42);
    RevisionApplier.Publication first = applier.replace(1, List.of(put("i0", 1)), EndpointDelta.Kind.SNAPSHOT);
    notifier.publish(first.set(), first.delta()); // the driver's first publication is always a SNAPSHOT
    go.countDown();
    for (long r = 2; r <= revisions; r++) {
      String id = "i" + random.nextInt(40);
      CacheRecord event = random.nextInt(3) == 0 ? delete(id, r) : put(id, r);
      applier.apply(r, List.of(event)).ifPresent(p -> notifier.publish(p.set(), p.delta()));
      if (r % 64 == 0) {
        parkNanos(100_000);
      }
    }
    for (Thread t : threads) {
      t.join();
    }
    drain.run();

    assertThat(checks).hasSize(adders * perAdder);
    for (ContractCheck c : checks) {
      assertThat(c.breaches).isEmpty();
      assertThat(c.snapshots).isEqualTo(1);
      assertThat(c.revision).isEqualTo(applier.revision());
      assertThat(c.rebuilt).isEqualTo(applier.current().asMap());
    }
  }

  @Test
  void aListenerAddedBeforeTheFirstPublicationGetsItAsItsSnapshot() throws Exception {
    ContractCheck check = new ContractCheck();
    notifier.add(check);
    RevisionApplier applier = new RevisionApplier(Endpoints.LAYOUT, Endpoints.PREFIX);
    RevisionApplier.Publication first = applier.replace(5, List.of(put("a", 3)), EndpointDelta.Kind.SNAPSHOT);
    notifier.publish(first.set(), first.delta());
    drain();

    assertThat(check.calls).isEqualTo(1);
    assertThat(check.snapshots).isEqualTo(1);
    assertThat(check.breaches).isEmpty();
  }

  @Test
  void aListenerAddedWhileTheCacheIsStaleHearsSoRightAfterItsSnapshot() throws Exception {
    RevisionApplier applier = new RevisionApplier(Endpoints.LAYOUT, Endpoints.PREFIX);
    RevisionApplier.Publication first = applier.replace(5, List.of(put("a", 3)), EndpointDelta.Kind.SNAPSHOT);
    notifier.publish(first.set(), first.delta());
    Instant since = Instant.parse("2026-12-01T10:00:00Z");
    notifier.stale(first.set(), since, "connection refused");
    List<String> heard = new ArrayList<>();
    notifier.add(new EndpointListener() {
      @Override
      public void onChange(EndpointSet set, EndpointDelta delta) {
        heard.add(delta.kind() + " " + set.revision());
      }

      @Override
      public void onStale(EndpointSet set, Instant at, String reason) {
        heard.add("stale since " + at + ": " + reason);
      }

      @Override
      public void onRecovered(EndpointSet set, Duration staleFor) {
        heard.add("recovered");
      }
    });
    notifier.recovered(first.set(), Duration.ofSeconds(1));
    drain();

    assertThat(heard).containsExactly("SNAPSHOT 5", "stale since " + since + ": connection refused", "recovered");
  }

  /** Runs the notifier's tasks only when told: the test decides how far behind the listeners are. */
  private static final class Stepper implements Executor {
    final java.util.ArrayDeque<Runnable> tasks = new java.util.ArrayDeque<>();

    @Override
    public void execute(Runnable task) {
      tasks.add(task);
    }

    void runAll() {
      while (!tasks.isEmpty()) {
        tasks.poll().run();
      }
    }
  }

  @Test
  void aListenerFarBehindGetsTheNewestSetWithTheCombinedDeltaAndIsNeverMoreThanEightBehind() {
    Stepper stepper = new Stepper();
    CacheNotifier lagging = new CacheNotifier(stepper, Endpoints.SERVICE);
    ContractCheck check = new ContractCheck();
    lagging.add(check);
    RevisionApplier applier = new RevisionApplier(Endpoints.LAYOUT, Endpoints.PREFIX);
    RevisionApplier.Publication first = applier.replace(1, List.of(put("i0", 1)), EndpointDelta.Kind.SNAPSHOT);
    lagging.publish(first.set(), first.delta());
    Random random = new Random(7);
    for (long r = 2; r <= 500; r++) {
      String id = "i" + random.nextInt(30);
      CacheRecord event = random.nextInt(3) == 0 ? delete(id, r) : put(id, r);
      applier.apply(r, List.of(event)).ifPresent(p -> lagging.publish(p.set(), p.delta()));
      assertThat(stepper.tasks).as("queued tasks: the add, and at most %d publications", CacheNotifier.MAX_BEHIND)
          .hasSizeLessThanOrEqualTo(1 + CacheNotifier.MAX_BEHIND);
    }
    stepper.runAll();

    assertThat(check.breaches).isEmpty();
    assertThat(check.snapshots).isEqualTo(1);
    assertThat(check.calls).isEqualTo(CacheNotifier.MAX_BEHIND);
    assertThat(check.revision).isEqualTo(applier.revision());
    assertThat(check.rebuilt).isEqualTo(applier.current().asMap());

    // caught up: the next publication is delivered as it is, unmerged
    RevisionApplier.Publication next = applier.apply(501, List.of(put("new", 501))).orElseThrow();
    lagging.publish(next.set(), next.delta());
    stepper.runAll();
    assertThat(check.calls).isEqualTo(CacheNotifier.MAX_BEHIND + 1);
    assertThat(check.breaches).isEmpty();
  }

  @Test
  void aSnapshotThatAbsorbsLaterPublicationsIsDeliveredAsASnapshotOfTheNewestSetAndAResyncStaysAResync() {
    Stepper stepper = new Stepper();
    CacheNotifier lagging = new CacheNotifier(stepper, Endpoints.SERVICE, 1);
    List<String> heard = new ArrayList<>();
    lagging.add((set, delta) -> heard.add(delta.kind() + " " + set.revision() + " +" + ids(delta.added()) + " -"
        + ids(delta.removed()) + " ~" + ids(delta.changed())));
    RevisionApplier applier = new RevisionApplier(Endpoints.LAYOUT, Endpoints.PREFIX);
    publish(lagging, applier.replace(1, List.of(put("a", 1), put("b", 1)), EndpointDelta.Kind.SNAPSHOT));
    publish(lagging, applier.apply(2, List.of(delete("a", 2))).orElseThrow());
    publish(lagging, applier.apply(3, List.of(put("c", 3))).orElseThrow());
    stepper.runAll();

    assertThat(heard).containsExactly("SNAPSHOT 3 +[b, c] -[] ~[]");

    Instance heavierB = Endpoints.instance("b").weight(7);
    publish(lagging, applier.apply(4, List.of(put(heavierB, 4))).orElseThrow());
    publish(lagging, applier.replace(5, List.of(put(heavierB, 4), put("d", 5)), EndpointDelta.Kind.RESYNC));
    stepper.runAll();

    assertThat(heard).last().isEqualTo("RESYNC 5 +[d] -[c] ~[b]");
  }

  private static void publish(CacheNotifier notifier, RevisionApplier.Publication p) {
    notifier.publish(p.set(), p.delta());
  }

  private static List<String> ids(List<Instance> instances) {
    return instances.stream().map(Instance::id).toList();
  }

  @Test
  void addingAListenerToAClosedCacheSaysSo() {
    notifyThread.shutdown();

    assertThatThrownBy(() -> notifier.add(new ContractCheck()))
        .isInstanceOf(IllegalStateException.class)
        .hasMessageContaining("closed");
  }

  private void drain() throws Exception {
    notifyThread.submit(() -> { }).get(30, TimeUnit.SECONDS);
  }

  private static void await(CountDownLatch latch) {
    try {
      latch.await();
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
  }

  private static void parkNanos(long nanos) {
    java.util.concurrent.locks.LockSupport.parkNanos(nanos);
  }
}
