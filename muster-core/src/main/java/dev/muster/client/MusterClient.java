package dev.muster.client;

import dev.muster.InvalidInputException;
import dev.muster.balance.Balancer;
import dev.muster.balance.BalancerConfig;
import dev.muster.cache.CacheConfig;
import dev.muster.cache.EndpointCache;
import dev.muster.cache.EndpointDelta;
import dev.muster.cache.EndpointListener;
import dev.muster.cache.EndpointSet;
import dev.muster.cache.EndpointSource;
import dev.muster.call.Attempt;
import dev.muster.call.CallMetrics;
import dev.muster.call.CallResult;
import dev.muster.call.Idempotent;
import dev.muster.call.NoEndpointException;
import dev.muster.call.Scheduler;
import dev.muster.call.internal.Caller;
import dev.muster.call.internal.MicrometerCallMetrics;
import dev.muster.RegistryUnavailableException;
import dev.muster.health.HealthEvent;
import dev.muster.health.HealthListener;
import dev.muster.health.Probe;
import dev.muster.health.ProbeConfig;
import dev.muster.health.Prober;
import dev.muster.outlier.OutlierConfig;
import dev.muster.outlier.OutlierDetector;
import dev.muster.registry.Instance;
import dev.muster.registry.Names;
import dev.muster.retry.RetryBudget;
import dev.muster.retry.RetryConfig;
import io.micrometer.core.instrument.MeterRegistry;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Objects;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.Consumer;
import java.util.function.LongSupplier;
import java.util.function.Supplier;
import java.util.random.RandomGenerator;

/*
 * Longer than our 500-line guide: about 170 of its lines are the nested Builder's setters (docs/ARCHITECTURE.md),
 * kept here so the API reads MusterClient.builder(...) as grpc-java's builders do; the client's own part is under 400.
 *
 * Wiring: cache -> listener (balancer.update(set, delta), then firstSet.complete) -> balancer -> caller. The listener
 * is added when the client is built, before anyone else's listener on a cache the client opened, so whatever a
 * later listener sees, the balancer has already taken.
 *
 * Waiting for the first set (grpc-java's channel waits for its first resolution the same way): `firstSet` completes
 * once, on the cache's notifier (one listener call at a time, in order, on a delivery-pool thread), after the
 * balancer took the first set, or exceptionally at close(). A call made
 * before that puts a gate into `waiting`; whichever comes first completes it: the first set or close (which drain
 * `waiting`), or the call's own first-set timer on the scheduler. CompletableFuture.complete is atomic, so exactly
 * one of them decides, and no thread blocks. A gate leaves `waiting` as soon as it is decided or its call is
 * cancelled, so calls that time out while the registry stays unreachable do not pile up. A call that adds its gate
 * just after the drain sees firstSet done on its re-check and decides its gate itself.
 *
 * Health (issue 16): the prober, if any, takes each change right after the balancer (same listener), and tells
 * the balancer its verdicts. Bounded staleness is the balancer's (BalancerConfig.maxStale, issue 34): the listener
 * hands it onStale / onRecovered / onFailed, it keeps the deadline (reached on time with the client's scheduler),
 * and call() asks it for a refusal (FAIL_CLOSED) before picking.
 */
/**
 * Calls one service over any transport: the endpoint cache's sets go to a {@link Balancer}, each call runs an
 * {@link Attempt} through the {@link Caller} (deadline, local ejection, retries within the retry budget).
 *
 * <p>Thread-safe and non-blocking: {@link #call} may be called from any thread and returns at once. A call made
 * before the cache's first set waits for it, without holding a thread, for up to the
 * {@linkplain Builder#firstSetTimeout first-set timeout}, and then fails with a {@link NoEndpointException}. The
 * returned future completes on the thread that settles the last attempt (a transport thread, the scheduler's thread
 * for a deadline or a first-set timeout, the cache's notifier when a waiting call starts, or the calling thread); do
 * not block in its callbacks. {@link Attempt#run} of a call that waited runs on the cache's notifier (one listener
 * call at a time, in order, on a delivery-pool thread), which is one more reason it must not block.
 *
 * <pre>{@code
 * try (MusterClient orders = MusterClient.builder(registry).service("orders").build()) {
 *   CallResult<Reply> r = orders.call((target, timeout) -> rpc(target, timeout), Idempotent.YES).join();
 * }
 * }</pre>
 */
public final class MusterClient implements AutoCloseable {
  /** The default {@link Builder#firstSetTimeout}. */
  public static final Duration DEFAULT_FIRST_SET_TIMEOUT = Duration.ofSeconds(10);

  private final String service;
  private final EndpointCache cache;
  private final boolean ownsCache;
  private final Balancer balancer;
  private final Caller caller;
  private final CallMetrics metrics;
  private final Scheduler scheduler;
  private final Duration firstSetTimeout;
  private final CompletableFuture<Void> firstSet = new CompletableFuture<>();
  /** The gates of calls waiting for the first set; each leaves on its first set, timeout, cancel or close. */
  private final Set<CompletableFuture<Throwable>> waiting = ConcurrentHashMap.newKeySet();
  private final AtomicBoolean closed = new AtomicBoolean();
  private final Prober prober;
  private final dev.muster.metrics.MusterMeters.Binding meters; // null without a MeterRegistry
  private final HealthListener events;
  private final Clock clock;

  private MusterClient(Builder b) {
    this.service = b.service;
    this.firstSetTimeout = b.firstSetTimeout;
    this.scheduler = b.scheduler;
    this.clock = b.clock;
    this.events = HealthListener.guarded(b.events);
    this.metrics = b.metrics != null ? b.metrics
        : b.meters != null ? new MicrometerCallMetrics(b.meters, b.service) : CallMetrics.noop();
    OutlierDetector detector = new OutlierDetector(b.outlier, b.ticker);
    this.balancer = Balancer.builder(b.balancer).detector(detector).ticker(b.ticker).random(b.random)
        .onRemoved(b.onRemoved).service(b.service).events(events).clock(b.clock).scheduler(b.scheduler).build();
    this.prober = b.probeConfig == null ? null : prober(b);
    this.caller = new Caller(balancer, new RetryBudget(b.retry, b.ticker), b.retry, b.ticker, b.scheduler, metrics);
    EndpointListener feed = new EndpointListener() {
      @Override
      public void onChange(EndpointSet set, EndpointDelta delta) {
        balancer.update(set, delta);
        if (prober != null) {
          prober.update(set, delta);
        }
        if (firstSet.complete(null)) {
          release(null);
        }
      }

      @Override
      public void onStale(EndpointSet set, Instant since, String reason) {
        balancer.onStale(set, since, reason); // bounded staleness is the balancer's (BalancerConfig.maxStale)
      }

      @Override
      public void onRecovered(EndpointSet set, Duration staleFor) {
        balancer.onRecovered(set, staleFor);
      }

      @Override
      public void onFailed(EndpointSet set, dev.muster.MusterException why) {
        if (firstSet.completeExceptionally(why)) { // refused before any set: waiting calls fail with why
          release(why);
        } else {
          balancer.onFailed(set, why); // refused for good: the set can only age from here
        }
      }
    };
    if (b.cache != null) {
      this.cache = b.cache;
      this.ownsCache = false;
      cache.addListener(feed);
    } else {
      this.cache = Objects.requireNonNull(b.source.open(b.cacheConfig, feed),
          "EndpointSource.open returned null");
      this.ownsCache = true;
    }
    // discovery's meters beside the calls': cache, balancer, probes, budget (unbound at close)
    this.meters = b.meters == null ? null : dev.muster.metrics.MusterMeters.client(b.meters, this);
  }

  /** The prober on its own pool ({@code muster-probe-SERVICE-N}, daemon), stopped with the prober. */
  private Prober prober(Builder b) {
    return Prober.start(b.service, b.probeConfig, b.probe, b.probeScheduler == null ? null : b.probeScheduler::schedule,
        b.random, balancer, events);
  }

  /**
   * True while the registry has been unreachable past {@code maxStale} ({@link BalancerConfig#maxStale()}): the
   * stale policy is in force.
   */
  public boolean isOverMaxStale() {
    return balancer.isOverMaxStale();
  }

  /**
   * Why a new call must be refused now, if it must: the registry has been unreachable past {@code maxStale} and the
   * policy is {@link dev.muster.balance.StalePolicy#FAIL_CLOSED} (the balancer's {@link Balancer#staleRefusal()}).
   */
  public java.util.Optional<RegistryUnavailableException> staleRefusal() {
    return balancer.staleRefusal();
  }

  /** The prober, when the client probes its endpoints. */
  public java.util.Optional<Prober> prober() {
    return java.util.Optional.ofNullable(prober);
  }

  /** A client of a service whose cache {@code source} opens; the client owns that cache and closes it. */
  public static Builder builder(EndpointSource source) {
    return new Builder(Objects.requireNonNull(source, "source"), null);
  }

  /**
   * A client over a cache the caller opened and still owns: {@link #close()} leaves it open. Name the service with
   * {@link Builder#service} (for error messages and metrics).
   */
  public static Builder builder(EndpointCache cache) {
    return new Builder(null, Objects.requireNonNull(cache, "cache"));
  }

  /**
   * Runs {@code attempt} against a picked endpoint, retrying idempotent calls on a different one within the budget
   * (see {@link Caller#call}). The future always completes normally, with a {@link CallResult} that says how the call
   * ended: a {@link NoEndpointException} when the set is empty or no first set came within the first-set timeout, an
   * {@link IllegalStateException} once the client is closed. Cancelling it stops a waiting call and further retries.
   */
  public <T> CompletableFuture<CallResult<T>> call(Attempt<T> attempt, Idempotent idempotent) {
    Objects.requireNonNull(attempt, "attempt");
    Objects.requireNonNull(idempotent, "idempotent");
    if (closed.get()) {
      return CompletableFuture.completedFuture(failed(closedFailure()));
    }
    java.util.Optional<RegistryUnavailableException> refused = staleRefusal();
    if (refused.isPresent()) {
      return CompletableFuture.completedFuture(failed(refused.get()));
    }
    if (isReady()) {
      return caller.call(attempt, idempotent);
    }
    CompletableFuture<Throwable> gate = new CompletableFuture<>(); // null: the first set is in
    waiting.add(gate);
    Runnable cancelTimer = scheduler.schedule(() -> {
      waiting.remove(gate);
      gate.complete(new NoEndpointException("no endpoint set for " + service + " within "
          + firstSetTimeout.toMillis() + " ms: its endpoint cache has not published a first set (is the registry"
          + " reachable?)"));
    }, firstSetTimeout);
    if (firstSet.isDone()) { // the first set (or close) came after isReady() and may have missed this gate
      waiting.remove(gate);
      gate.complete(isReady() ? null : firstSetFailure());
    }
    CompletableFuture<CallResult<T>> result = new CompletableFuture<>();
    result.whenComplete((r, e) -> {
      cancelTimer.run();
      waiting.remove(gate);
    });
    gate.thenAccept(failure -> {
      if (result.isDone()) {
        return; // cancelled while waiting
      }
      if (failure != null) {
        if (failure instanceof NoEndpointException) {
          metrics.noEndpoint();
        }
        result.complete(failed(failure));
        return;
      }
      CompletableFuture<CallResult<T>> running = caller.call(attempt, idempotent);
      result.whenComplete((r, e) -> {
        if (result.isCancelled()) {
          running.cancel(false);
        }
      });
      running.whenComplete((r, e) -> {
        if (e != null) {
          result.completeExceptionally(e);
        } else {
          result.complete(r);
        }
      });
    });
    return result;
  }

  /** The service this client calls. */
  public String service() {
    return service;
  }

  /** True once the balancer has taken the cache's first set. */
  public boolean isReady() {
    return firstSet.isDone() && !firstSet.isCompletedExceptionally();
  }

  /**
   * Blocks until the balancer has taken the cache's first set, for up to {@code timeout}; false on timeout, once
   * closed, or at once when the cache {@linkplain EndpointCache#failure() failed} first (etcd refused it). For
   * start-up code and tests: {@link #call} does not need it.
   */
  public boolean awaitReady(Duration timeout) {
    try {
      firstSet.get(timeout.toNanos(), TimeUnit.NANOSECONDS);
      return true;
    } catch (TimeoutException | ExecutionException e) {
      return false;
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      return false;
    }
  }

  /** Why the client's endpoint cache stopped for good (etcd refused it), if it did; see {@link EndpointCache#failure()}. */
  public java.util.Optional<dev.muster.MusterException> cacheFailure() {
    return cache.failure();
  }

  /** Calls waiting for the first set now (each leaves on the first set, its timeout, its cancel or close). */
  public int waitingCalls() {
    return waiting.size();
  }

  /** How long a call waits for the first set. */
  public Duration firstSetTimeout() {
    return firstSetTimeout;
  }

  /** The endpoint cache (staleness, revision), opened by this client or given to its builder. */
  public EndpointCache cache() {
    return cache;
  }

  /** The balancer: endpoints, their load and ejection state, and its {@link Balancer#detector() detector}. */
  public Balancer balancer() {
    return balancer;
  }

  /** The retry budget's counters (requests, retries, refusals). */
  public RetryBudget budget() {
    return caller.budget();
  }

  /**
   * Closes the cache if this client opened it; calls still waiting for the first set and every later call fail
   * with an {@link IllegalStateException}. Calls in flight run to their end. Idempotent.
   */
  @Override
  public void close() {
    if (!closed.compareAndSet(false, true)) {
      return;
    }
    if (firstSet.completeExceptionally(closedFailure())) {
      release(closedFailure());
    }
    balancer.close(); // its maxStale timer
    if (meters != null) {
      meters.close();
    }
    if (prober != null) {
      prober.close();
    }
    if (ownsCache) {
      cache.close();
    }
  }

  /** Lets every waiting call go on: with null to run, else to fail with {@code failure}. */
  private void release(Throwable failure) {
    for (CompletableFuture<Throwable> gate : waiting) {
      waiting.remove(gate);
      gate.complete(failure);
    }
  }

  /** Why the first set will never come: the cache's refusal, or close. */
  private RuntimeException firstSetFailure() {
    return cache.failure().<RuntimeException>map(f -> f).orElseGet(this::closedFailure);
  }

  private IllegalStateException closedFailure() {
    return new IllegalStateException("the MusterClient of " + service + " is closed");
  }

  private static <T> CallResult<T> failed(Throwable failure) {
    return new CallResult<>(null, failure, null, List.of(), false);
  }

  @Override
  public String toString() {
    return "MusterClient[" + service + ", " + (isReady() ? balancer.endpoints().size() + " endpoint(s)"
        : "waiting for its first set") + (closed.get() ? ", closed" : "") + "]";
  }

  /**
   * Builds a {@link MusterClient}. Required: the service ({@link #service} or {@link #cache(CacheConfig)}). Every
   * other option has the default its setter documents. Not thread-safe; {@link #build()} checks and may be called
   * once per client.
   */
  public static final class Builder {
    private final EndpointSource source;
    private final EndpointCache cache;
    private String service;
    private CacheConfig cacheConfig;
    private BalancerConfig balancer = BalancerConfig.defaults();
    private OutlierConfig outlier = OutlierConfig.defaults();
    private RetryConfig retry = RetryConfig.defaults();
    private MeterRegistry meters;
    private CallMetrics metrics;
    private Duration firstSetTimeout = DEFAULT_FIRST_SET_TIMEOUT;
    private LongSupplier ticker = System::nanoTime;
    private Scheduler scheduler = Scheduler.system();
    private Supplier<? extends RandomGenerator> random = ThreadLocalRandom::current;
    private Consumer<Instance> onRemoved;
    private ProbeConfig probeConfig;
    private Probe probe;
    private Scheduler probeScheduler;
    private HealthListener events;
    private Clock clock = Clock.systemUTC();

    private Builder(EndpointSource source, EndpointCache cache) {
      this.source = source;
      this.cache = cache;
    }

    /**
     * The service to call. With an {@link EndpointSource}, its cache is {@code CacheConfig.builder(service)}'s
     * defaults (namespace {@code default}, every version) unless {@link #cache(CacheConfig)} is given.
     */
    public Builder service(String service) {
      this.service = Names.requireValid("service", service);
      return this;
    }

    /** The cache to open (namespace, version, timeouts, snapshot file); sets the service too. */
    public Builder cache(CacheConfig config) {
      if (source == null) {
        throw new IllegalStateException("this builder calls through a given EndpointCache: a CacheConfig would not be"
            + " used; build from MusterClient.builder(EndpointSource) to open one");
      }
      this.cacheConfig = Objects.requireNonNull(config, "cache");
      this.service = service == null ? config.service() : service;
      return this;
    }

    /** Balancing policy and zone preference; default {@link BalancerConfig#defaults()} (power of two choices). */
    public Builder balancer(BalancerConfig config) {
      this.balancer = Objects.requireNonNull(config, "balancer");
      return this;
    }

    /** Local ejection; default {@link OutlierConfig#defaults()}; {@code enabled(false)} turns it off. */
    public Builder outlier(OutlierConfig config) {
      this.outlier = Objects.requireNonNull(config, "outlier");
      return this;
    }

    /**
     * Retries, attempt timeout and retry budget; default {@link RetryConfig#defaults()} (one retry, 1 s attempts,
     * 20 % over 10 s plus 10 per second); {@code maxRetries(0)} turns retries off.
     */
    public Builder retry(RetryConfig config) {
      this.retry = Objects.requireNonNull(config, "retry");
      return this;
    }

    /** Counts call events into Micrometer (tagged with the service); default none. */
    public Builder meters(MeterRegistry meters) {
      this.meters = meters;
      return this;
    }

    /** Where call events go, instead of {@link #meters}; default {@link CallMetrics#noop()}. */
    public Builder metrics(CallMetrics metrics) {
      this.metrics = metrics;
      return this;
    }

    /**
     * How long a call made before the cache's first set waits for it before failing with a
     * {@link NoEndpointException}; default {@link #DEFAULT_FIRST_SET_TIMEOUT} (10 s). Zero fails at once.
     */
    public Builder firstSetTimeout(Duration timeout) {
      Objects.requireNonNull(timeout, "firstSetTimeout");
      if (timeout.isNegative()) {
        throw new InvalidInputException("firstSetTimeout", timeout, "use zero or a positive duration");
      }
      this.firstSetTimeout = timeout;
      return this;
    }

    /**
     * The monotonic ticker for latency, ejection times and the retry budget; default {@code System::nanoTime}. Tests
     * pass a fake one.
     */
    public Builder ticker(LongSupplier ticker) {
      this.ticker = Objects.requireNonNull(ticker, "ticker");
      return this;
    }

    /** Runs attempt deadlines and first-set timeouts; default {@link Scheduler#system()}. */
    public Builder scheduler(Scheduler scheduler) {
      this.scheduler = Objects.requireNonNull(scheduler, "scheduler");
      return this;
    }

    /** The random generator for picks, asked once per pick; default {@code ThreadLocalRandom::current}. */
    public Builder random(Supplier<? extends RandomGenerator> random) {
      this.random = Objects.requireNonNull(random, "random");
      return this;
    }

    /**
     * Told of each instance that leaves the set (a transport closes its connections to it), on the cache's notifier
     * (one listener call at a time, in order, on a delivery-pool thread); fast, must not throw. Default none.
     */
    public Builder onRemoved(Consumer<Instance> onRemoved) {
      this.onRemoved = onRemoved;
      return this;
    }

    /**
     * Probes every endpoint actively, in parallel with the lease ({@link ProbeConfig}); HTTP and TCP are built in.
     * Default: no probes. Null turns them off.
     */
    public Builder probe(ProbeConfig config) {
      this.probeConfig = config;
      return this;
    }

    /** Probes with a probe of your own (e.g. {@code dev.muster.grpc.GrpcHealthProbe}), closed with the client. */
    public Builder probe(ProbeConfig config, Probe probe) {
      this.probeConfig = Objects.requireNonNull(config, "config");
      this.probe = Objects.requireNonNull(probe, "probe");
      return this;
    }

    /** Runs the probes' timers instead of the client's own probe pool (tests drive them from a fake clock). */
    public Builder probeScheduler(Scheduler scheduler) {
      this.probeScheduler = scheduler;
      return this;
    }

    /** Where health events go (probe down/up, panic, slow start done, max-stale reached); default none. */
    public Builder healthEvents(HealthListener listener) {
      this.events = listener;
      return this;
    }

    /** The wall clock for stale ages; default {@link Clock#systemUTC()}. */
    public Builder clock(Clock clock) {
      this.clock = Objects.requireNonNull(clock, "clock");
      return this;
    }

    /** The client; with an {@link EndpointSource} this opens the service's cache. */
    public MusterClient build() {
      if (service == null) {
        throw new InvalidInputException("service", null,
            "name the service to call with service(\"orders\") or cache(CacheConfig)");
      }
      if (cacheConfig != null && !cacheConfig.service().equals(service)) {
        throw new InvalidInputException("service", service, "use the cache config's service, "
            + cacheConfig.service() + ", or leave service() out");
      }
      if (source != null && cacheConfig == null) {
        cacheConfig = CacheConfig.builder(service).build();
      }
      return new MusterClient(this);
    }
  }
}
