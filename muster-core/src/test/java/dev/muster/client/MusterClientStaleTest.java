package dev.muster.client;

import static org.assertj.core.api.Assertions.assertThat;

import dev.muster.RegistryUnavailableException;
import dev.muster.balance.BalancerConfig;
import dev.muster.balance.StalePolicy;
import dev.muster.balance.FakeTicker;
import dev.muster.cache.CacheConfig;
import dev.muster.cache.EndpointListener;
import dev.muster.call.Attempt;
import dev.muster.call.AttemptResult;
import dev.muster.call.CallResult;
import dev.muster.call.FakeScheduler;
import dev.muster.call.Idempotent;
import dev.muster.call.Scheduler;
import dev.muster.health.HealthEvent;
import dev.muster.outlier.OutlierConfig;
import dev.muster.registry.Instance;
import dev.muster.retry.RetryConfig;
import java.net.ConnectException;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneId;
import java.time.ZoneOffset;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.SplittableRandom;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Nested;
import org.junit.jupiter.api.Test;

/**
 * Bounded staleness ({@code BalancerConfig.maxStale}, {@link StalePolicy}) through {@link MusterClient}: a hand-fed cache
 * that goes stale and recovers when the test says so, a fake ticker, scheduler and wall clock that move together.
 */
class MusterClientStaleTest {
  private static final Duration MAX_STALE = Duration.ofSeconds(30);

  private final FakeTicker ticker = new FakeTicker();
  private final FakeScheduler scheduler = new FakeScheduler(ticker);
  private final TickerClock clock = new TickerClock(ticker);
  private final List<String> targets = new CopyOnWriteArrayList<>();
  private final Set<String> failing = new HashSet<>();
  private final List<HealthEvent> events = new CopyOnWriteArrayList<>();
  private final SplittableRandom random = new SplittableRandom(7);
  private ManualCache cache;
  private MusterClient client;

  @AfterEach
  void close() {
    if (client != null) {
      client.close();
    }
  }

  /** A wall clock that reads the fake ticker: the scheduler's timers and the stale ages agree. */
  private static final class TickerClock extends Clock {
    private static final Instant BASE = Instant.parse("2025-03-01T12:00:00Z");
    private final FakeTicker ticker;
    private final long start;

    TickerClock(FakeTicker ticker) {
      this.ticker = ticker;
      this.start = ticker.getAsLong();
    }

    @Override
    public ZoneId getZone() {
      return ZoneOffset.UTC;
    }

    @Override
    public Clock withZone(ZoneId zone) {
      throw new UnsupportedOperationException();
    }

    @Override
    public Instant instant() {
      return BASE.plusNanos(ticker.getAsLong() - start);
    }
  }

  private static Instance instance(String id) {
    return Instance.of("orders", "10.0.0.7", 8080).id(id).registeredAt(null);
  }

  /** Answers at once: a refused connection from the ids in {@link #failing}, else success. */
  private final Attempt<String> attempt = (target, timeout) -> {
    targets.add(target.id());
    return CompletableFuture.completedFuture(failing.contains(target.id())
        ? AttemptResult.localOriginFailure(new ConnectException("refused by " + target.id()))
        : AttemptResult.success(target.id()));
  };

  private MusterClient client(Duration maxStale, StalePolicy policy, Instance... instances) {
    return client(scheduler, maxStale, policy, instances);
  }

  private MusterClient client(Scheduler timers, Duration maxStale, StalePolicy policy, Instance... instances) {
    cache = new ManualCache(CacheConfig.builder("orders").build());
    cache.publish(instances);
    client = MusterClient.builder(cache).service("orders").ticker(ticker).scheduler(timers).clock(clock)
        .random(() -> random)
        .balancer(BalancerConfig.builder().policy(BalancerConfig.Policy.ROUND_ROBIN).maxStale(maxStale, policy)
            .build())
        .outlier(OutlierConfig.builder().enabled(false).build())
        .retry(RetryConfig.defaults().toBuilder().maxRetries(0).build())
        .healthEvents(events::add).build();
    return client;
  }

  private CallResult<String> call() {
    CallResult<String> r = client.call(attempt, Idempotent.YES).getNow(null);
    assertThat(r).as("the call completes at once").isNotNull();
    return r;
  }

  private List<HealthEvent.Type> eventTypes() {
    return events.stream().map(HealthEvent::type).toList();
  }

  @Nested
  class FailClosed {
    @Test
    void callsGoOnUntilMaxStaleAndFailAtOnceAfterIt() {
      client(MAX_STALE, StalePolicy.FAIL_CLOSED, instance("a"));
      cache.stale(clock.instant());

      scheduler.advance(MAX_STALE.minusMillis(1));
      CallResult<String> before = call();
      assertThat(before.ok()).isTrue();
      assertThat(client.staleRefusal()).isEmpty();
      assertThat(client.isOverMaxStale()).isFalse();
      assertThat(events).isEmpty();

      scheduler.advance(Duration.ofMillis(1));
      targets.clear();
      CallResult<String> after = call();

      assertThat(after.ok()).isFalse();
      assertThat(after.attempts()).isZero();
      assertThat(targets).as("no attempt is made").isEmpty();
      assertThat(after.failure()).isInstanceOf(RegistryUnavailableException.class)
          .hasMessageStartingWith("registry unreachable for 30 s, over maxStale 30 s")
          .hasMessageContaining("orders")
          .hasMessageContaining("FAIL_CLOSED");
      assertThat(client.isOverMaxStale()).isTrue();
      assertThat(client.staleRefusal()).hasValueSatisfying(e ->
          assertThat(e).hasMessageStartingWith("registry unreachable for 30 s, over maxStale 30 s"));
      assertThat(eventTypes()).containsExactly(HealthEvent.Type.MAX_STALE_REACHED);
      HealthEvent reached = events.get(0);
      assertThat(reached.service()).isEqualTo("orders");
      assertThat(reached.instance()).isNull();
      assertThat(reached.detail()).contains("registry unreachable for 30 s, over maxStale 30 s")
          .contains("FAIL_CLOSED");
      assertThat(reached.at()).isEqualTo(clock.instant());
    }

    @Test
    void theRefusalSaysHowLongTheRegistryHasBeenUnreachable() {
      client(MAX_STALE, StalePolicy.FAIL_CLOSED, instance("a"));
      cache.stale(clock.instant());
      scheduler.advance(Duration.ofSeconds(45));

      assertThat(call().failure()).hasMessageStartingWith("registry unreachable for 45 s, over maxStale 30 s");
      assertThat(events).hasSize(1);
    }

    @Test
    void theTimerRunsFromTheStaleStartNotFromWhenTheClientHeardOfIt() {
      client(MAX_STALE, StalePolicy.FAIL_CLOSED, instance("a"));
      cache.stale(clock.instant().minusSeconds(20));

      scheduler.advance(Duration.ofMillis(9_999));
      assertThat(call().ok()).isTrue();
      scheduler.advance(Duration.ofMillis(1));

      assertThat(call().failure()).hasMessageStartingWith("registry unreachable for 30 s, over maxStale 30 s");
    }

    @Test
    void recoveryLiftsTheRefusalAndIsReported() {
      client(MAX_STALE, StalePolicy.FAIL_CLOSED, instance("a"));
      cache.stale(clock.instant());
      scheduler.advance(Duration.ofSeconds(40));
      assertThat(call().ok()).isFalse();

      cache.recovered(Duration.ofSeconds(40));

      assertThat(client.staleRefusal()).isEmpty();
      assertThat(client.isOverMaxStale()).isFalse();
      CallResult<String> r = call();
      assertThat(r.ok()).isTrue();
      assertThat(r.value()).isEqualTo("a");
      assertThat(eventTypes()).containsExactly(HealthEvent.Type.MAX_STALE_REACHED,
          HealthEvent.Type.MAX_STALE_CLEARED);
      assertThat(events.get(1).detail()).contains("40000 ms");
      assertThat(events.get(1).instance()).isNull();
    }

    @Test
    void aRecoveryBeforeMaxStaleMeansNoEventAndNoRefusal() {
      client(MAX_STALE, StalePolicy.FAIL_CLOSED, instance("a"));
      cache.stale(clock.instant());
      scheduler.advance(Duration.ofSeconds(10));

      cache.recovered(Duration.ofSeconds(10));
      scheduler.advance(Duration.ofMinutes(5));

      assertThat(call().ok()).isTrue();
      assertThat(client.staleRefusal()).isEmpty();
      assertThat(client.isOverMaxStale()).isFalse();
      assertThat(events).isEmpty();
      assertThat(scheduler.pending()).as("the max-stale timer was cancelled").isZero();
    }

    @Test
    void aNewOutageGetsItsOwnTimer() {
      client(MAX_STALE, StalePolicy.FAIL_CLOSED, instance("a"));
      cache.stale(clock.instant());
      scheduler.advance(Duration.ofSeconds(20));
      cache.recovered(Duration.ofSeconds(20));
      scheduler.advance(Duration.ofSeconds(5));
      cache.stale(clock.instant());

      scheduler.advance(Duration.ofSeconds(29));
      assertThat(call().ok()).as("54 s after the first outage began, 29 s into this one").isTrue();
      scheduler.advance(Duration.ofSeconds(1));

      assertThat(call().failure()).hasMessageStartingWith("registry unreachable for 30 s, over maxStale 30 s");
      assertThat(eventTypes()).containsExactly(HealthEvent.Type.MAX_STALE_REACHED);
    }

    /** The fake scheduler, but a cancel comes too late: the task runs anyway (it had already started). */
    private final Scheduler lateCancels = (task, delay) -> {
      scheduler.schedule(task, delay);
      return () -> { };
    };

    @Test
    void aTimerThatRunsDespiteARecoveryChangesNothing() {
      client(lateCancels, MAX_STALE, StalePolicy.FAIL_CLOSED, instance("a"));
      cache.stale(clock.instant());
      scheduler.advance(Duration.ofSeconds(10));
      cache.recovered(Duration.ofSeconds(10));

      scheduler.advance(Duration.ofSeconds(30)); // the timer armed for the outage that ended runs

      assertThat(client.isOverMaxStale()).isFalse();
      assertThat(client.staleRefusal()).isEmpty();
      assertThat(call().ok()).isTrue();
      assertThat(events).isEmpty();
    }

    @Test
    void aTimerOfAnEarlierOutageDoesNotCutTheNextOneShort() {
      client(lateCancels, MAX_STALE, StalePolicy.FAIL_CLOSED, instance("a"));
      cache.stale(clock.instant());
      scheduler.advance(Duration.ofSeconds(20));
      cache.recovered(Duration.ofSeconds(20));
      cache.stale(clock.instant());

      scheduler.advance(Duration.ofSeconds(15)); // the first outage's timer ran at 30 s; this one is 15 s old
      assertThat(client.isOverMaxStale()).isFalse();
      assertThat(call().ok()).isTrue();
      assertThat(events).isEmpty();

      scheduler.advance(Duration.ofSeconds(15));
      assertThat(call().failure()).hasMessageStartingWith("registry unreachable for 30 s, over maxStale 30 s");
      assertThat(eventTypes()).containsExactly(HealthEvent.Type.MAX_STALE_REACHED);
    }

    @Test
    void aListenerThatThrowsDoesNotStopThePolicy() {
      cache = new ManualCache(CacheConfig.builder("orders").build());
      cache.publish(instance("a"));
      client = MusterClient.builder(cache).service("orders").ticker(ticker).scheduler(scheduler).clock(clock)
          .balancer(BalancerConfig.builder().maxStale(MAX_STALE, StalePolicy.FAIL_CLOSED).build())
          .healthEvents(e -> {
            throw new IllegalStateException("listener bug");
          }).build();
      cache.stale(clock.instant());

      scheduler.advance(MAX_STALE);

      assertThat(client.isOverMaxStale()).isTrue();
      assertThat(call().failure()).isInstanceOf(RegistryUnavailableException.class);
      cache.recovered(MAX_STALE);
      assertThat(call().ok()).isTrue();
    }

    @Test
    void closingCancelsTheTimer() {
      client(MAX_STALE, StalePolicy.FAIL_CLOSED, instance("a"));
      cache.stale(clock.instant());

      client.close();
      scheduler.advance(Duration.ofMinutes(1));

      assertThat(events).isEmpty();
      assertThat(client.isOverMaxStale()).isFalse();
    }
  }

  @Nested
  class KeepFailingEndpointsOut {
    @Test
    void afterMaxStaleOnlyEndpointsWithARecentSuccessArePicked() {
      client(MAX_STALE, StalePolicy.KEEP_FAILING_ENDPOINTS_OUT, instance("a"), instance("b"), instance("c"));
      cache.stale(clock.instant());
      scheduler.advance(Duration.ofSeconds(10));
      failing.add("b");
      failing.add("c");
      for (int i = 0; i < 3; i++) {
        call();
      }
      assertThat(targets).containsExactlyInAnyOrder("a", "b", "c");

      scheduler.advance(Duration.ofSeconds(20));
      targets.clear();
      List<CallResult<String>> results = new ArrayList<>();
      for (int i = 0; i < 30; i++) {
        results.add(call());
      }

      assertThat(targets).containsOnly("a").hasSize(30);
      assertThat(results).allSatisfy(r -> assertThat(r.ok()).isTrue());
      assertThat(client.staleRefusal()).as("not FAIL_CLOSED: nothing is refused").isEmpty();
      assertThat(client.isOverMaxStale()).isTrue();
      assertThat(client.balancer().isRestrictedToRecentSuccess()).isTrue();
      assertThat(eventTypes()).containsExactly(HealthEvent.Type.MAX_STALE_REACHED);
      assertThat(events.get(0).detail()).contains("KEEP_FAILING_ENDPOINTS_OUT");
    }

    @Test
    void recoveryLiftsTheRestriction() {
      client(MAX_STALE, StalePolicy.KEEP_FAILING_ENDPOINTS_OUT, instance("a"), instance("b"), instance("c"));
      cache.stale(clock.instant());
      failing.add("b");
      for (int i = 0; i < 3; i++) {
        call();
      }
      scheduler.advance(MAX_STALE);
      assertThat(client.balancer().isRestrictedToRecentSuccess()).isTrue();

      cache.recovered(MAX_STALE);
      targets.clear();
      for (int i = 0; i < 30; i++) {
        call();
      }

      assertThat(client.balancer().isRestrictedToRecentSuccess()).isFalse();
      assertThat(targets).contains("a", "b", "c");
      assertThat(eventTypes()).containsExactly(HealthEvent.Type.MAX_STALE_REACHED,
          HealthEvent.Type.MAX_STALE_CLEARED);
    }

    @Test
    void anEndpointThatFailsWhileRestrictedIsOutAtOnce() {
      client(MAX_STALE, StalePolicy.KEEP_FAILING_ENDPOINTS_OUT, instance("a"), instance("b"), instance("c"));
      cache.stale(clock.instant());
      failing.add("c");
      for (int i = 0; i < 3; i++) {
        call();
      }
      scheduler.advance(MAX_STALE);
      targets.clear();
      for (int i = 0; i < 10; i++) {
        call();
      }
      assertThat(targets).containsOnly("a", "b");

      failing.add("a");
      targets.clear();
      for (int i = 0; i < 10; i++) {
        call();
      }

      assertThat(targets).as("a's first failure takes it out").containsOnlyOnce("a");
      assertThat(targets.stream().filter("b"::equals).count()).isGreaterThanOrEqualTo(8);
    }
  }

  @Test
  void withoutMaxStaleTheClientNeverRefuses() {
    client(null, null, instance("a"));
    cache.stale(clock.instant());

    scheduler.advance(Duration.ofHours(1));

    assertThat(call().ok()).isTrue();
    assertThat(client.staleRefusal()).isEmpty();
    assertThat(client.isOverMaxStale()).isFalse();
    assertThat(client.balancer().isRestrictedToRecentSuccess()).isFalse();
    assertThat(events).isEmpty();
    assertThat(scheduler.pending()).isZero();
  }

  @Test
  void aGivenCacheWithoutAConfigMeansNoMaxStale() {
    cache = new ManualCache(null);
    cache.publish(instance("a"));
    client = MusterClient.builder(cache).service("orders").ticker(ticker).scheduler(scheduler).clock(clock)
        .healthEvents(events::add).build();
    cache.stale(clock.instant());

    scheduler.advance(Duration.ofHours(1));

    assertThat(call().ok()).isTrue();
    assertThat(client.staleRefusal()).isEmpty();
    assertThat(events).isEmpty();
  }

  @Test
  void maxStaleFromTheBalancerConfigAppliesToAClientThatOpensItsOwnCache() {
    List<CacheConfig> opened = new ArrayList<>();
    client = MusterClient.builder((config, listeners) -> {
      opened.add(config);
      cache = new ManualCache(config);
      cache.publish(instance("a"));
      for (EndpointListener l : listeners) {
        cache.addListener(l);
      }
      return cache;
    }).cache(CacheConfig.builder("orders").build())
        .balancer(BalancerConfig.builder().maxStale(MAX_STALE, StalePolicy.FAIL_CLOSED).build())
        .ticker(ticker).scheduler(scheduler).clock(clock).healthEvents(events::add).build();
    assertThat(opened).singleElement().satisfies(c -> assertThat(c.service()).isEqualTo("orders"));
    assertThat(call().ok()).isTrue();

    cache.stale(clock.instant());
    scheduler.advance(MAX_STALE);

    assertThat(call().failure()).isInstanceOf(RegistryUnavailableException.class)
        .hasMessageStartingWith("registry unreachable for 30 s, over maxStale 30 s");
  }
}
