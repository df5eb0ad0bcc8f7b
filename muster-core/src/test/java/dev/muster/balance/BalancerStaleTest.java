package dev.muster.balance;

import static dev.muster.balance.TestEndpoints.instance;
import static dev.muster.balance.TestEndpoints.set;
import static org.assertj.core.api.Assertions.assertThat;

import dev.muster.RegistryUnavailableException;
import dev.muster.health.HealthEvent;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneOffset;
import java.util.ArrayList;
import java.util.List;
import java.util.SplittableRandom;
import org.junit.jupiter.api.Test;

/**
 * Bounded staleness in the balancer itself, with no scheduler: the picker is timed to rebuild at maxStale's end, so
 * the first pick (or check) after it finds the policy in force, and no pick a nanosecond before. What every adapter
 * that builds on a balancer gets: a pick refused, an empty eligible list, a refusal that says why.
 */
class BalancerStaleTest {
  private static final Duration MAX_STALE = Duration.ofSeconds(30);
  private static final Instant T0 = Instant.parse("2026-01-01T00:00:00Z");

  private final FakeTicker ticker = new FakeTicker();
  private final long start = ticker.getAsLong();
  private final Clock clock = new Clock() {
    @Override
    public java.time.ZoneId getZone() {
      return ZoneOffset.UTC;
    }

    @Override
    public Clock withZone(java.time.ZoneId zone) {
      return this;
    }

    @Override
    public Instant instant() {
      return T0.plusNanos(ticker.getAsLong() - start);
    }
  };
  private final List<HealthEvent> events = new ArrayList<>();

  private Balancer balancer(StalePolicy policy) {
    SplittableRandom random = new SplittableRandom(3);
    Balancer b = Balancer.builder(BalancerConfig.builder().maxStale(MAX_STALE, policy).build()).ticker(ticker)
        .random(() -> random).clock(clock).service("orders").events(events::add).build();
    b.update(set(instance("a"), instance("b")));
    return b;
  }

  @Test
  void failClosedRefusesFromTheFirstPickAtMaxStaleAndNotANanosecondBefore() {
    Balancer b = balancer(StalePolicy.FAIL_CLOSED);
    b.onStale(set(), clock.instant(), "etcd unreachable");

    ticker.advance(MAX_STALE.minusNanos(1));
    assertThat(b.pick()).isNotNull();
    assertThat(b.eligible()).hasSize(2);
    assertThat(b.staleRefusal()).isEmpty();
    ticker.advance(Duration.ofNanos(1));

    assertThat(b.pick()).isNull();
    assertThat(b.pick(b.endpoints().get(0))).isNull();
    assertThat(b.eligible()).isEmpty();
    assertThat(b.isOverMaxStale()).isTrue();
    assertThat(b.staleRefusal()).get().isInstanceOf(RegistryUnavailableException.class)
        .extracting(Throwable::getMessage).isEqualTo("registry unreachable for 30 s, over maxStale 30 s: new calls to"
            + " orders are refused (stalePolicy FAIL_CLOSED) until etcd answers");
    assertThat(events).extracting(HealthEvent::type).containsExactly(HealthEvent.Type.MAX_STALE_REACHED);
    assertThat(events.get(0).detail()).isEqualTo("registry unreachable for 30 s, over maxStale 30 s; new calls are"
        + " refused (FAIL_CLOSED)");
  }

  @Test
  void recoveryLiftsThePolicyAndReportsIt() {
    Balancer b = balancer(StalePolicy.FAIL_CLOSED);
    b.onStale(set(), clock.instant(), "etcd unreachable");
    ticker.advance(MAX_STALE.plusSeconds(5));
    assertThat(b.pick()).isNull();

    b.onRecovered(set(), MAX_STALE.plusSeconds(5));

    assertThat(b.pick()).isNotNull();
    assertThat(b.eligible()).hasSize(2);
    assertThat(b.staleRefusal()).isEmpty();
    assertThat(events).extracting(HealthEvent::type).containsExactly(HealthEvent.Type.MAX_STALE_REACHED,
        HealthEvent.Type.MAX_STALE_CLEARED);
    assertThat(events.get(1).detail()).isEqualTo("the registry answers again after 35000 ms stale; FAIL_CLOSED"
        + " lifted");
  }

  @Test
  void aBalancerThatJoinsAnOutageLateCountsFromTheOutagesStart() {
    Balancer b = balancer(StalePolicy.FAIL_CLOSED);
    Instant since = clock.instant();
    ticker.advance(Duration.ofSeconds(20));
    b.onStale(set(), since, "etcd unreachable"); // heard 20 s into the outage

    ticker.advance(Duration.ofSeconds(10));
    assertThat(b.pick()).isNull();
  }

  @Test
  void keepFailingEndpointsOutPicksOnlyEndpointsWithARecentSuccess() {
    Balancer b = balancer(StalePolicy.KEEP_FAILING_ENDPOINTS_OUT);
    EndpointState a = b.endpoints().get(0);
    b.outcome(a, true);
    b.onStale(set(), clock.instant(), "etcd unreachable");
    ticker.advance(MAX_STALE);

    assertThat(b.isRestrictedToRecentSuccess()).isTrue();
    for (int i = 0; i < 20; i++) {
      assertThat(b.pick()).isSameAs(a);
    }
    assertThat(b.staleRefusal()).as("no refusal: this policy keeps calling").isEmpty();
    assertThat(events.get(0).detail()).endsWith("only endpoints with a recent success are called"
        + " (KEEP_FAILING_ENDPOINTS_OUT)");
  }

  @Test
  void withoutMaxStaleAnOutageOfAnyLengthChangesNothing() {
    Balancer b = Balancer.builder(BalancerConfig.defaults()).ticker(ticker).clock(clock).build();
    b.update(set(instance("a")));
    b.onStale(set(), clock.instant(), "etcd unreachable");
    ticker.advance(Duration.ofDays(1));

    assertThat(b.pick()).isNotNull();
    assertThat(b.isOverMaxStale()).isFalse();
  }
}
