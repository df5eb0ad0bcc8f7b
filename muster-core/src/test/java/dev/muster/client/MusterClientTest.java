package dev.muster.client;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.muster.InvalidInputException;
import dev.muster.balance.FakeTicker;
import dev.muster.cache.CacheConfig;
import dev.muster.call.Attempt;
import dev.muster.call.AttemptResult;
import dev.muster.call.CallResult;
import dev.muster.call.FakeScheduler;
import dev.muster.call.Idempotent;
import dev.muster.call.NoEndpointException;
import dev.muster.outlier.OutlierConfig;
import dev.muster.registry.Instance;
import java.net.ConnectException;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/** {@link MusterClient} on a fake ticker and scheduler, over an in-memory cache: nothing here sleeps. */
class MusterClientTest {
  private final FakeTicker ticker = new FakeTicker();
  private final FakeScheduler scheduler = new FakeScheduler(ticker);
  private final ManualCache cache = new ManualCache();
  private final List<String> targets = new CopyOnWriteArrayList<>();
  private MusterClient client;

  @AfterEach
  void close() {
    if (client != null) {
      client.close();
    }
  }

  private static Instance instance(String id) {
    return Instance.of("orders", "10.0.0.7", 8080).id(id);
  }

  private MusterClient.Builder builder() {
    return MusterClient.builder(cache.source()).service("orders").ticker(ticker)
        .scheduler(scheduler);
  }

  /** Answers at once: success, or a refused connection from ids starting with "dead". */
  private final Attempt<String> attempt = (target, timeout) -> {
    targets.add(target.id());
    return CompletableFuture.completedFuture(target.id().startsWith("dead")
        ? AttemptResult.localOriginFailure(new ConnectException("refused by " + target.id()))
        : AttemptResult.success(target.id()));
  };

  @Test
  void aCallBeforeTheFirstSetWaitsForItAndRunsWhenItArrives() {
    client = builder().build();
    CompletableFuture<CallResult<String>> call = client.call(attempt, Idempotent.YES);
    scheduler.advance(Duration.ofSeconds(9));
    assertThat(call).isNotDone();
    assertThat(targets).isEmpty();

    cache.publish(instance("a"));

    assertThat(call).isCompleted();
    CallResult<String> r = call.join();
    assertThat(r.ok()).isTrue();
    assertThat(r.value()).isEqualTo("a");
    scheduler.advance(Duration.ofSeconds(5)); // the first-set timer was cancelled: nothing changes
    assertThat(call.join()).isSameAs(r);
  }

  @Test
  void aCallThatGetsNoFirstSetWithinTheTimeoutFailsWithNoEndpointNamingTheServiceAndTheTimeout() {
    client = builder().firstSetTimeout(Duration.ofSeconds(3)).build();
    CompletableFuture<CallResult<String>> call = client.call(attempt, Idempotent.YES);

    scheduler.advance(Duration.ofMillis(2999));
    assertThat(call).isNotDone();
    scheduler.advance(Duration.ofMillis(1));

    CallResult<String> r = call.join();
    assertThat(r.ok()).isFalse();
    assertThat(r.attempts()).isZero();
    assertThat(r.failure()).isInstanceOf(NoEndpointException.class)
        .hasMessageContaining("orders").hasMessageContaining("3000 ms");
    cache.publish(instance("a"));
    assertThat(targets).as("a call that timed out never runs").isEmpty();
  }

  @Test
  void callsThatTimeOutWhileTheRegistryStaysUnreachableDoNotPileUp() {
    client = builder().firstSetTimeout(Duration.ofSeconds(1)).build();
    for (int i = 0; i < 100; i++) {
      client.call(attempt, Idempotent.YES);
    }
    assertThat(client.waitingCalls()).isEqualTo(100);

    scheduler.advance(Duration.ofSeconds(1));

    assertThat(client.waitingCalls()).isZero();
    assertThat(scheduler.pending()).isZero();
  }

  @Test
  void theFirstSetReleasesEveryWaitingCall() {
    client = builder().build();
    List<CompletableFuture<CallResult<String>>> calls = new java.util.ArrayList<>();
    for (int i = 0; i < 10; i++) {
      calls.add(client.call(attempt, Idempotent.YES));
    }

    cache.publish(instance("a"), instance("b"));

    assertThat(calls).allSatisfy(c -> assertThat(c.join().ok()).isTrue());
    assertThat(client.waitingCalls()).isZero();
    assertThat(scheduler.pending()).as("every first-set timer is cancelled").isZero();
  }

  @Test
  void noCallRacingTheFirstSetIsLeftWaiting() throws Exception {
    for (int round = 0; round < 20; round++) {
      ManualCache racing = new ManualCache();
      try (MusterClient c = MusterClient.builder(racing).service("orders").firstSetTimeout(Duration.ofMinutes(5))
          .build()) {
        java.util.concurrent.ExecutorService pool = java.util.concurrent.Executors.newFixedThreadPool(3);
        List<java.util.concurrent.Future<CompletableFuture<CallResult<String>>>> calls = new java.util.ArrayList<>();
        for (int i = 0; i < 300; i++) {
          calls.add(pool.submit(() -> c.call(attempt, Idempotent.YES)));
          if (i == 150) {
            racing.publish(instance("a"));
          }
        }
        for (var f : calls) {
          assertThat(f.get(10, java.util.concurrent.TimeUnit.SECONDS).get(10, java.util.concurrent.TimeUnit.SECONDS)
              .ok()).isTrue();
        }
        pool.shutdown();
        assertThat(c.waitingCalls()).isZero();
      }
    }
  }

  @Test
  void theDefaultFirstSetTimeoutIsTenSeconds() {
    client = builder().build();
    assertThat(client.firstSetTimeout()).isEqualTo(Duration.ofSeconds(10));
    CompletableFuture<CallResult<String>> call = client.call(attempt, Idempotent.NO);
    scheduler.advance(Duration.ofMillis(9999));
    assertThat(call).isNotDone();
    scheduler.advance(Duration.ofMillis(1));
    assertThat(call.join().failure()).isInstanceOf(NoEndpointException.class);
  }

  @Test
  void aCallAfterTheFirstSetRunsAtOnceOnTheCallingThread() {
    cache.publish(instance("a"));
    client = builder().build();
    assertThat(client.isReady()).isTrue();

    CallResult<String> r = client.call(attempt, Idempotent.NO).getNow(null);

    assertThat(r).isNotNull();
    assertThat(r.value()).isEqualTo("a");
  }

  @Test
  void anEmptyFirstSetFailsCallsAtOnceWithNoEndpoint() {
    client = builder().build();
    cache.publish(List.of());

    CallResult<String> r = client.call(attempt, Idempotent.YES).getNow(null);

    assertThat(r).isNotNull();
    assertThat(r.failure()).isInstanceOf(NoEndpointException.class);
  }

  @Test
  void aCancelledWaitingCallNeverRuns() {
    client = builder().build();
    CompletableFuture<CallResult<String>> call = client.call(attempt, Idempotent.YES);

    call.cancel(false);
    cache.publish(instance("a"));

    assertThat(targets).isEmpty();
    assertThat(scheduler.pending()).as("its first-set timer is cancelled").isZero();
  }

  @Test
  void aFailedAttemptIsRetriedElsewhereEjectsItsEndpointAndShowsInTheDiagnostics() {
    cache.publish(instance("dead-1"), instance("alive"));
    client = builder().outlier(OutlierConfig.defaults().toBuilder().consecutiveLocalOriginFailure(1).build()).build();

    for (int i = 0; i < 10; i++) {
      CallResult<String> r = client.call(attempt, Idempotent.YES).join();
      assertThat(r.ok()).as("call %d: %s", i, r).isTrue();
    }

    assertThat(client.balancer().detector().ejections()).isEqualTo(1);
    assertThat(client.budget().deposits()).isEqualTo(10);
    assertThat(client.budget().withdrawals()).isEqualTo(targets.stream().filter(t -> t.startsWith("dead")).count());
    assertThat(client.balancer().endpoints()).hasSize(2);
  }

  @Test
  void closeClosesTheCacheTheClientOpenedAndFailsWaitingAndLaterCalls() {
    client = builder().build();
    CompletableFuture<CallResult<String>> waiting = client.call(attempt, Idempotent.YES);

    client.close();
    client.close();

    assertThat(cache.closes()).isEqualTo(1);
    assertThat(waiting.join().failure()).isInstanceOf(IllegalStateException.class).hasMessageContaining("orders");
    assertThat(client.call(attempt, Idempotent.YES).join().failure()).isInstanceOf(IllegalStateException.class);
    assertThat(client.awaitReady(Duration.ZERO)).isFalse();
  }

  @Test
  void closeLeavesOpenACacheTheClientWasGiven() {
    cache.publish(instance("a"));
    client = MusterClient.builder(cache).service("orders").scheduler(scheduler)
        .build();
    client.close();
    assertThat(cache.closes()).isZero();
  }

  @Test
  void theServiceNameOpensTheDefaultCacheOfThatService() {
    client = builder().build();
    assertThat(cache.opened()).containsExactly(CacheConfig.builder("orders").build());
    assertThat(client.service()).isEqualTo("orders");
  }

  @Test
  void aCacheConfigNamesTheService() {
    CacheConfig config = CacheConfig.builder("billing").namespace("prod").build();
    client = MusterClient.builder(cache.source()).cache(config).build();
    assertThat(cache.opened()).containsExactly(config);
    assertThat(client.service()).isEqualTo("billing");
  }

  @Test
  void theBuilderRejectsAMissingServiceAMismatchAndANegativeTimeout() {
    assertThatThrownBy(() -> MusterClient.builder(cache.source()).build())
        .isInstanceOf(InvalidInputException.class).hasMessageContaining("service");
    assertThatThrownBy(() -> MusterClient.builder(cache.source()).service("orders")
        .cache(CacheConfig.builder("billing").build()).build())
        .isInstanceOf(InvalidInputException.class).hasMessageContaining("billing");
    assertThatThrownBy(() -> builder().firstSetTimeout(Duration.ofSeconds(-1)))
        .isInstanceOf(InvalidInputException.class).hasMessageContaining("PT-1S");
    assertThat(cache.opened()).isEmpty();
  }
}
