package dev.muster.balance;

import dev.muster.call.Scheduler;
import dev.muster.health.HealthListener;
import dev.muster.outlier.OutlierConfig;
import dev.muster.outlier.OutlierDetector;
import dev.muster.registry.Instance;
import java.time.Clock;
import java.util.Objects;
import java.util.concurrent.ThreadLocalRandom;
import java.util.function.Consumer;
import java.util.function.LongSupplier;
import java.util.function.Supplier;
import java.util.random.RandomGenerator;

/** Builds a {@link Balancer} ({@link Balancer#builder}); each setting has a production default. Not thread-safe. */
public final class BalancerBuilder {
  final BalancerConfig config;
  OutlierDetector detector;
  LongSupplier ticker = System::nanoTime;
  Supplier<? extends RandomGenerator> random = ThreadLocalRandom::current;
  Consumer<Instance> onRemoved;
  String service = "?";
  HealthListener events = HealthListener.NONE;
  Clock clock = Clock.systemUTC();
  Scheduler scheduler;

  BalancerBuilder(BalancerConfig config) {
    this.config = Objects.requireNonNull(config, "config");
  }

  /** This service's own detector, on the same ticker (default: one with {@link OutlierConfig#defaults()}). */
  public BalancerBuilder detector(OutlierDetector detector) {
    this.detector = Objects.requireNonNull(detector, "detector");
    return this;
  }

  /** The monotonic ticker (default {@code System::nanoTime}). */
  public BalancerBuilder ticker(LongSupplier nanoTime) {
    this.ticker = Objects.requireNonNull(nanoTime, "nanoTime");
    return this;
  }

  /** The random generator for picks, asked once per pick (default {@code ThreadLocalRandom::current}). */
  public BalancerBuilder random(Supplier<? extends RandomGenerator> random) {
    this.random = Objects.requireNonNull(random, "random");
    return this;
  }

  /** Told of each instance dropped by an update (to close its connections); fast, must not throw. */
  public BalancerBuilder onRemoved(Consumer<Instance> onRemoved) {
    this.onRemoved = onRemoved;
    return this;
  }

  /** The service named in events and refusals. */
  public BalancerBuilder service(String service) {
    this.service = Objects.requireNonNull(service, "service");
    return this;
  }

  /** Where panic, slow-start and stale-policy events go (see {@link HealthListener} for the threads). */
  public BalancerBuilder events(HealthListener events) {
    this.events = events == null ? HealthListener.NONE : events;
    return this;
  }

  /** The wall clock of events and of the cache's stale times (default the system's). */
  public BalancerBuilder clock(Clock clock) {
    this.clock = Objects.requireNonNull(clock, "clock");
    return this;
  }

  /**
   * A scheduler to reach {@code maxStale} on time, for its event and restriction; without one (the default) it
   * is reached by the first pick or check after it.
   */
  public BalancerBuilder scheduler(Scheduler scheduler) {
    this.scheduler = scheduler;
    return this;
  }

  public Balancer build() {
    return new Balancer(this);
  }
}
