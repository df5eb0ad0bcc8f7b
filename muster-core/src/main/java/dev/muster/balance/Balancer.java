package dev.muster.balance;

import dev.muster.MusterException;
import dev.muster.RegistryUnavailableException;
import dev.muster.cache.EndpointDelta;
import dev.muster.cache.EndpointListener;
import dev.muster.cache.EndpointSet;
import dev.muster.call.Scheduler;
import dev.muster.health.HealthEvent;
import dev.muster.health.HealthListener;
import dev.muster.health.Prober;
import dev.muster.internal.SerialRelay;
import dev.muster.outlier.OutlierConfig;
import dev.muster.outlier.OutlierDetector;
import dev.muster.outlier.OutlierState;
import dev.muster.registry.Instance;
import dev.muster.registry.InstanceKey;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.Optional;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.locks.ReentrantLock;
import java.util.function.Consumer;
import java.util.function.LongSupplier;
import java.util.function.Supplier;
import java.util.random.RandomGenerator;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/*
 * Design (grpc-java's LoadBalancer/SubchannelPicker split): every state change — a set update, an ejection, an
 * un-ejection — rebuilds an immutable Picker under `lock` and publishes it through the volatile `picker` field. A
 * pick reads that field and nothing else shared, so it takes no lock and allocates nothing.
 *
 * A set update from the cache comes with its delta: the EndpointTable (mutable, only touched under `lock`, never seen
 * by a pick) changes only at the delta's keys, so unchanged endpoints' states are not even looked at. Only a change of
 * members re-lays the key-ordered arrays; the picker, flat arrays of candidates, is rebuilt for every update that
 * changes members or what it reads (weight, zone, DRAINING). The picker's build stays O(set size): making it
 * incremental would need persistent weighted trees in place of the arrays that keep pick() allocation-free.
 *
 * Un-ejection needs no timer: the picker knows the earliest ejection end; a pick that finds the ticker past it tries
 * the lock (tryLock, so a pick never waits) and rebuilds, which first asks the detector to un-eject what is due. If
 * another thread holds the lock, the pick uses the current picker; the holder's rebuild or the next pick catches up.
 *
 * Lock order: this lock, then the detector's. The onRemoved callback runs after the lock is released.
 *
 * Health (issue 16): a probe verdict (probeChanged), the stale policy and slow start are more inputs of the same
 * rebuild. Bounded staleness (issue 34: here, not in each adapter): the balancer is the cache's listener, so it hears
 * onStale / onRecovered itself; MaxStale keeps the deadline, and the picker is timed to rebuild at it like an
 * ejection's end, so maxStale is reached at the first pick after it even without a timer; with a Scheduler the
 * rebuild also runs on time (its event, its restriction). Past maxStale, FAIL_CLOSED makes the picker refuse and
 * KEEP_FAILING_ENDPOINTS_OUT restricts it to recent successes; recovery lifts either. Slow start needs to know when an endpoint became routable: each rebuild
 * compares every endpoint's availability with what the last rebuild saw (EndpointState.wasRoutable, under the
 * lock) and starts a ramp on a rising edge, unless the endpoint came with the balancer's first non-empty set. A
 * ramping picker is timed like an ejection: the first pick past its next step rebuilds. Events (panic on/off, slow
 * start done) are queued under the lock and handed to the HealthListener after it is released, one at a time in the
 * order they were queued (SerialRelay), by the thread that released it or by one delivering at that moment.
 */
/**
 * Chooses an endpoint of one service for each attempt: round robin, weighted random or power of two choices, with
 * zone preference, no picks for {@code DRAINING} or ejected endpoints, and panic routing (pick among all) when no
 * endpoint is available (SPEC §5).
 *
 * <p>Thread-safe. {@link #pick()} and {@link #pick(EndpointState)} are lock-free and allocation-free and may be called
 * from any thread. {@link #update(EndpointSet, EndpointDelta)} and {@link #update(EndpointSet)} may be called from any
 * thread (normally the cache's notifier, the balancer being the cache's {@link EndpointListener}); they take a short
 * lock and call {@code onRemoved} on the calling thread after releasing it.
 */
public final class Balancer implements EndpointListener, Prober.Sink, AutoCloseable {
  private static final Logger log = LoggerFactory.getLogger(Balancer.class);

  private final BalancerConfig config;
  private final OutlierDetector detector;
  private final LongSupplier nanoTime;
  private final Supplier<? extends RandomGenerator> random;
  private final Consumer<Instance> onRemoved;
  private final String service;
  private final HealthListener events;
  private final Clock clock;
  private final Scheduler scheduler; // null: maxStale is reached by the first pick or check after it
  private final AtomicLong roundRobin = new AtomicLong();
  private final ReentrantLock lock = new ReentrantLock();
  private final SerialRelay<HealthEvent> pendingEvents; // queued under the lock, delivered in that order

  // Guarded by lock.
  private final EndpointTable table;
  private boolean hadEndpoints;
  private long recentWindowNanos = -1;
  private final MaxStale maxStale;
  private Runnable cancelStaleTimer = () -> { };

  private volatile Picker picker = Picker.EMPTY;

  /**
   * @param detector this service's own detector; the balancer attaches itself to it
   * @param nanoTime the monotonic ticker, the same one the detector uses ({@code System::nanoTime} in production)
   * @param random the random generator for picks, asked once per pick; {@code ThreadLocalRandom::current} in
   *     production, a seeded generator in single-threaded tests
   * @param onRemoved told of each instance dropped by an update (to close its connections); fast, must not throw;
   *     null for none
   */
  public Balancer(BalancerConfig config, OutlierDetector detector, LongSupplier nanoTime,
      Supplier<? extends RandomGenerator> random, Consumer<Instance> onRemoved) {
    this(builder(config).detector(detector).ticker(nanoTime).random(random).onRemoved(onRemoved));
  }

  /**
   * A balancer that reports panic routing and slow start to {@code events} (see {@link HealthListener} for the
   * threads), naming {@code service} in them.
   */
  public Balancer(BalancerConfig config, OutlierDetector detector, LongSupplier nanoTime,
      Supplier<? extends RandomGenerator> random, Consumer<Instance> onRemoved, String service,
      HealthListener events) {
    this(builder(config).detector(detector).ticker(nanoTime).random(random).onRemoved(onRemoved).service(service)
        .events(events));
  }

  Balancer(BalancerBuilder b) {
    this.service = b.service;
    this.events = HealthListener.guarded(b.events);
    this.pendingEvents = new SerialRelay<>(this.events::onEvent);
    this.config = b.config;
    this.nanoTime = b.ticker;
    this.detector = b.detector != null ? b.detector : new OutlierDetector(OutlierConfig.defaults(), b.ticker);
    this.random = b.random;
    this.onRemoved = b.onRemoved == null ? i -> { } : b.onRemoved;
    this.clock = b.clock;
    this.scheduler = b.scheduler;
    this.maxStale = new MaxStale(config, service, clock);
    this.table = new EndpointTable(config.ewmaDecay(), nanoTime);
    detector.attach(new OutlierDetector.Pool() {
      @Override
      public List<OutlierState> hosts() {
        return picker.outliers;
      }

      @Override
      public void ejectionsChanged() {
        rebuild();
      }
    });
  }

  /** A builder of a balancer with {@code config}; everything else has a production default. */
  public static BalancerBuilder builder(BalancerConfig config) {
    return new BalancerBuilder(config);
  }

  /** A balancer on the system ticker and {@link ThreadLocalRandom}. */
  public static Balancer create(BalancerConfig config, OutlierDetector detector, Consumer<Instance> onRemoved) {
    return new Balancer(config, detector, System::nanoTime, ThreadLocalRandom::current, onRemoved);
  }

  public BalancerConfig config() {
    return config;
  }

  public OutlierDetector detector() {
    return detector;
  }

  /**
   * Takes a whole new endpoint set: surviving keys keep their {@link EndpointState} (load, latency, ejection) with
   * the instance refreshed, new keys get a fresh one, and removed keys are dropped and reported to
   * {@code onRemoved}. O(set size): compares every key. A cache's listener should call
   * {@link #update(EndpointSet, EndpointDelta)} (or register the balancer itself), which touches only the delta.
   */
  public void update(EndpointSet set) {
    Objects.requireNonNull(set, "set");
    List<Instance> removed = new ArrayList<>();
    lock.lock();
    try {
      table.replace(set, removed);
      rebuildLocked();
    } finally {
      lock.unlock();
    }
    report(removed);
    fireEvents();
  }

  /**
   * Takes the change from the set given last to {@code set}, as the cache's listener receives it: only the
   * {@code delta}'s keys are looked at (O(changed)); unchanged endpoints keep their state and instance untouched.
   * The picker is then rebuilt once (O(set size), a walk over flat arrays: they are what keeps {@link #pick()}
   * allocation-free), unless the delta changed only fields it does not read (metadata, tags, address).
   *
   * <p>A delta that does not fit the balancer's current endpoints (a key to change or remove that it does not
   * have, a key to add that it has, or a final count other than {@code set.size()}: the balancer was last given a
   * different set, e.g. by {@link #update(EndpointSet)}) is not trusted: {@code set} is then taken whole.
   */
  public void update(EndpointSet set, EndpointDelta delta) {
    Objects.requireNonNull(set, "set");
    Objects.requireNonNull(delta, "delta");
    List<Instance> removed = new ArrayList<>();
    lock.lock();
    try {
      if (delta.isEmpty() && set.size() == table.size()) {
        return; // nothing to do: every state and the picker are as they were
      }
      Boolean pickerStale = table.apply(set, delta, removed);
      if (pickerStale == null) {
        removed.clear();
        table.replace(set, removed);
        pickerStale = true;
      }
      if (pickerStale) {
        rebuildLocked();
      }
    } finally {
      lock.unlock();
    }
    report(removed);
    fireEvents();
  }

  /** {@link #update(EndpointSet, EndpointDelta)}: a balancer can be a cache's listener itself. */
  @Override
  public void onChange(EndpointSet set, EndpointDelta delta) {
    update(set, delta);
  }

  private void report(List<Instance> removed) {
    for (Instance instance : removed) {
      try {
        onRemoved.accept(instance);
      } catch (RuntimeException e) {
        log.warn("onRemoved callback failed for {}; ignored", instance.key().path(), e);
      }
    }
  }

  /**
   * The registry has been unreachable since {@code since} (the cache's {@code onStale}): past
   * {@link BalancerConfig#maxStale()} of it, the stale policy applies. From any thread; takes the short lock.
   */
  @Override
  public void onStale(EndpointSet set, Instant since, String reason) {
    Duration left;
    lock.lock();
    try {
      left = maxStale.stale(since, nanoTime.getAsLong());
      rebuildLocked();
    } finally {
      lock.unlock();
    }
    fireEvents();
    if (left != null && scheduler != null) {
      Runnable cancel = scheduler.schedule(this::rebuild, left); // reaches maxStale on time
      Runnable previous;
      lock.lock();
      try {
        previous = cancelStaleTimer;
        cancelStaleTimer = cancel;
      } finally {
        lock.unlock();
      }
      previous.run();
    }
  }

  /** The registry answers again (the cache's {@code onRecovered}): a stale policy in force is lifted. */
  @Override
  public void onRecovered(EndpointSet set, Duration staleFor) {
    stopStaleClock(() -> {
      if (maxStale.recovered()) {
        pendingEvents.add(event(HealthEvent.Type.MAX_STALE_CLEARED, null, maxStale.clearedDetail(staleFor)));
      }
    });
  }

  /** Runs {@code step} on the stale state under the lock, cancels the maxStale timer, rebuilds, fires events. */
  private void stopStaleClock(Runnable step) {
    Runnable cancel;
    lock.lock();
    try {
      step.run();
      cancel = cancelStaleTimer;
      cancelStaleTimer = () -> { };
      rebuildLocked();
    } finally {
      lock.unlock();
    }
    cancel.run();
    fireEvents();
  }

  /** The cache stopped for good (refused): its set can only age from now, as if stale since now. */
  @Override
  public void onFailed(EndpointSet set, MusterException why) {
    onStale(set, clock.instant(), why.getMessage());
  }

  /**
   * Why a new call must be refused now, if it must: the registry has been unreachable past {@code maxStale} and the
   * policy is {@link StalePolicy#FAIL_CLOSED}. Every adapter that picks asks this when {@link #pick()} finds none.
   */
  public Optional<RegistryUnavailableException> staleRefusal() {
    current(); // maxStale may have been reached since the last rebuild
    return Optional.ofNullable(maxStale.refusal());
  }

  /** True while the registry has been unreachable past {@code maxStale}: the stale policy is in force. */
  public boolean isOverMaxStale() {
    current();
    return maxStale.isOver();
  }

  /**
   * What a pick may choose from now: the available endpoints (or, in panic, the panic candidates), none while
   * {@link StalePolicy#FAIL_CLOSED} refuses; for adapters that hand out a list rather than pick (Spring's
   * DiscoveryClient, DNS). Lock-free; the list is immutable.
   */
  public List<EndpointState> eligible() {
    return current().eligible;
  }

  /**
   * Stops the stale policy's clock: the timer that reaches {@code maxStale} on time is cancelled and an outage under
   * way no longer reaches it (a closed owner wants no more events); picks still work. Idempotent.
   */
  @Override
  public void close() {
    stopStaleClock(maxStale::disarm);
  }

  /** An endpoint for a new attempt, or null when the set is empty. Lock-free, allocation-free. */
  public EndpointState pick() {
    return current().pick(random.get(), null);
  }

  /**
   * An endpoint other than {@code avoid}, for a retry: from the same candidates as {@link #pick()}, then from every
   * available endpoint in any zone. Null when no endpoint other than {@code avoid} can be picked.
   */
  public EndpointState pick(EndpointState avoid) {
    return current().pick(random.get(), avoid);
  }

  /** Every endpoint of the current set, in key order, ejected and draining ones included. */
  public List<EndpointState> endpoints() {
    return current().endpoints;
  }

  /**
   * True while picks go across endpoints that local judgement excludes: none is available (all ejected, probed
   * down or draining), or fewer than {@link BalancerConfig#healthyPanicThreshold()} percent of the UP ones are.
   */
  public boolean isPanicking() {
    return current().panicking;
  }

  /** Endpoints routable now (UP, not ejected, not probed down), as the panic threshold counts them. */
  public int availableCount() {
    return current().availableCount;
  }

  /**
   * Active probes' verdict on {@code key}: down takes it out of the candidates (unless panic routing), up lets it
   * back (ramping if slow start is on). A key not in the set is ignored. From any thread; takes the short lock.
   * The events it causes (panic on or off) are queued, not delivered: call {@link #settled()} once you hold no
   * lock (the {@link Prober} does), or they go with the next change's.
   */
  @Override
  public void probeChanged(InstanceKey key, boolean down) {
    lock.lock();
    try {
      EndpointState state = table.get(key);
      if (state == null || state.isProbeDown() == down) {
        return;
      }
      state.probeDown(down);
      rebuildLocked();
    } finally {
      lock.unlock();
    }
  }

  /** Hands the queued health events to the listener, on this thread; call it holding no lock. */
  @Override
  public void settled() {
    fireEvents();
  }

  /**
   * The stale policy {@code KEEP_FAILING_ENDPOINTS_OUT} in force: only endpoints whose last attempt succeeded
   * within {@code window} are candidates (every endpoint if none did). Null lifts it. From any thread.
   */
  public void restrictToRecentSuccess(Duration window) {
    lock.lock();
    try {
      long next = window == null ? -1 : window.toNanos();
      if (next == recentWindowNanos) {
        return;
      }
      recentWindowNanos = next;
      rebuildLocked();
    } finally {
      lock.unlock();
    }
    fireEvents();
  }

  /** True while {@link #restrictToRecentSuccess} is in force. */
  public boolean isRestrictedToRecentSuccess() {
    return current().restricted;
  }

  /**
   * An attempt on {@code endpoint} ended: stamps its outcome for the stale policy, and while that policy is in force
   * a failure takes the endpoint out at once (rebuild). The call engine calls it for every attempt.
   */
  public void outcome(EndpointState endpoint, boolean ok) {
    outcome(endpoint, ok, nanoTime.getAsLong());
  }

  /** {@link #outcome(EndpointState, boolean)} at {@code nowNanos} (this balancer's ticker), read once by the caller. */
  public void outcome(EndpointState endpoint, boolean ok, long nowNanos) {
    endpoint.outcome(ok, nowNanos);
    if (!ok && picker.restricted) {
      rebuild();
    }
  }

  private Picker current() {
    Picker p = picker;
    if (p.timed && nanoTime.getAsLong() - p.nextRebuildNanos >= 0 && lock.tryLock()) {
      try {
        rebuildLocked();
      } finally {
        lock.unlock();
      }
      fireEvents();
      p = picker;
    }
    return p;
  }

  private void rebuild() {
    lock.lock();
    try {
      rebuildLocked();
    } finally {
      lock.unlock();
    }
    fireEvents();
  }

  private void rebuildLocked() {
    detector.unejectDue(table.outliers());
    long now = nanoTime.getAsLong();
    boolean slowStart = !config.slowStartWindow().isZero();
    EndpointState[] ordered = table.ordered();
    for (EndpointState e : ordered) {
      boolean routable = e.isAvailable();
      if (routable && !e.wasRoutable && slowStart && hadEndpoints) {
        e.ramping = true;
        e.routableSinceNanos = now;
      } else if (e.ramping && (!routable || now - e.routableSinceNanos >= config.slowStartWindow().toNanos())) {
        e.ramping = false;
        if (routable) {
          pendingEvents.add(event(HealthEvent.Type.SLOW_START_DONE, e.instance().id(), "full share after "
              + config.slowStartWindow().toMillis() + " ms"));
        }
      }
      e.wasRoutable = routable;
    }
    hadEndpoints |= ordered.length > 0;
    if (maxStale.reachIfDue(now)) {
      pendingEvents.add(event(HealthEvent.Type.MAX_STALE_REACHED, null, maxStale.reachedDetail()));
    }
    long window = maxStale.recentWindowNanos() >= 0 ? maxStale.recentWindowNanos() : recentWindowNanos;
    Picker before = picker;
    picker = new Picker(ordered, table.outliers(), config, roundRobin, now, window, maxStale.refusing(),
        maxStale.wakeAtNanos());
    if (picker.panicking != before.panicking) {
      pendingEvents.add(event(picker.panicking ? HealthEvent.Type.PANIC_ON : HealthEvent.Type.PANIC_OFF, null,
          picker.availableCount + " of " + picker.upCount + " UP endpoints routable, panic threshold "
              + config.healthyPanicThreshold() + " %"));
    }
  }

  private HealthEvent event(HealthEvent.Type type, String instance, String detail) {
    return new HealthEvent(type, service, instance, detail, clock.instant());
  }

  /** Hands queued events to the listener; called after every release of the lock, never under it. */
  private void fireEvents() {
    pendingEvents.drain(); // one thread at a time, in the order they were queued (SerialRelay)
  }
}
