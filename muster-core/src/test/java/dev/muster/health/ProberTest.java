package dev.muster.health;

import static org.assertj.core.api.Assertions.assertThat;

import dev.muster.balance.Balancer;
import dev.muster.balance.BalancerConfig;
import dev.muster.balance.FakeTicker;
import dev.muster.cache.EndpointDelta;
import dev.muster.cache.EndpointSet;
import dev.muster.call.FakeScheduler;
import dev.muster.health.Prober.Verdict;
import dev.muster.outlier.OutlierDetector;
import dev.muster.registry.Instance;
import dev.muster.registry.InstanceKey;
import java.lang.management.ManagementFactory;
import java.lang.management.MonitorInfo;
import java.lang.management.ThreadInfo;
import java.time.Duration;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Deque;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.SplittableRandom;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Nested;
import org.junit.jupiter.api.Test;

/** {@link Prober} on a fake ticker and scheduler, with a scripted probe: nothing here sleeps. */
class ProberTest {
  private static final Duration INTERVAL = Duration.ofSeconds(5);

  private final FakeTicker ticker = new FakeTicker();
  private final FakeScheduler scheduler = new FakeScheduler(ticker);
  private final ScriptedProbe probe = new ScriptedProbe();
  private final List<Told> sink = new ArrayList<>();
  private final List<HealthEvent> events = new ArrayList<>();
  private final AtomicInteger onCloseRuns = new AtomicInteger();
  private EndpointSet current = EndpointSet.EMPTY;
  private Prober prober;

  /** One call of the sink. */
  private record Told(String id, boolean down) {}

  @AfterEach
  void closeProber() {
    if (prober != null) {
      prober.close();
    }
  }

  private static Instance instance(String id) {
    return Instance.of("orders", "10.0.0.7", 8080).id(id).registeredAt(null);
  }

  /** TCP probes every 5 s, no jitter, the given thresholds. */
  private static ProbeConfig config(int unhealthy, int healthy) {
    return ProbeConfig.tcp().withInterval(INTERVAL).withJitterPercent(0).withThresholds(unhealthy, healthy);
  }

  private Prober prober(ProbeConfig config) {
    return prober(config, 42);
  }

  private Prober prober(ProbeConfig config, long seed) {
    SplittableRandom random = new SplittableRandom(seed);
    prober = new Prober("orders", config, probe, scheduler::schedule, () -> random,
        (key, down) -> sink.add(new Told(key.id(), down)), events::add, onCloseRuns::incrementAndGet);
    return prober;
  }

  /** Publishes {@code instances} as the next set, with its delta from the last one, to the prober. */
  private void publish(Instance... instances) {
    EndpointSet next = EndpointSet.of(current.revision() + 1, List.of(instances));
    EndpointDelta delta = EndpointDelta.between(
        current == EndpointSet.EMPTY ? EndpointDelta.Kind.SNAPSHOT : EndpointDelta.Kind.UPDATE, current, next);
    current = next;
    prober.update(next, delta);
  }

  /** Advances in small steps until {@code n} more probes of {@code id} have started (and, if answered, been judged). */
  private void runProbes(String id, int n) {
    int target = probe.checks(id) + n;
    long limit = ticker.getAsLong() + INTERVAL.multipliedBy(2L * n + 2).toNanos();
    while (probe.checks(id) < target) {
      assertThat(ticker.getAsLong()).as("%s was not probed %d more times in time", id, n).isLessThan(limit);
      scheduler.advance(Duration.ofMillis(10));
    }
  }

  private static InstanceKey key(String id) {
    return instance(id).key();
  }

  private List<HealthEvent.Type> eventTypes() {
    return events.stream().map(HealthEvent::type).toList();
  }

  /**
   * A probe whose answers the test scripts per endpoint id: each check takes the next scripted answer, or the
   * endpoint's default. Records each check's id, address and ticker time.
   */
  private final class ScriptedProbe implements Probe {
    /** What one check does. */
    enum Answer { PASS, FAIL, HANG, THROW, NULL, EXCEPTIONAL }

    final Map<String, Deque<Answer>> script = new HashMap<>();
    final Map<String, Answer> defaults = new HashMap<>();
    final List<String> checked = new ArrayList<>();
    final List<String> addresses = new ArrayList<>();
    final Map<String, List<Long>> times = new HashMap<>();
    final List<CompletableFuture<ProbeResult>> hanging = new ArrayList<>();
    final List<String> forgotten = new ArrayList<>();
    int closes;

    void script(String id, Answer... answers) {
      script.computeIfAbsent(id, k -> new ArrayDeque<>()).addAll(List.of(answers));
    }

    void always(String id, Answer answer) {
      defaults.put(id, answer);
    }

    int checks(String id) {
      return (int) checked.stream().filter(id::equals).count();
    }

    List<Long> times(String id) {
      return times.getOrDefault(id, List.of());
    }

    @Override
    public CompletableFuture<ProbeResult> check(Instance target, Duration timeout) {
      String id = target.id();
      checked.add(id);
      addresses.add(id + "@" + target.address());
      times.computeIfAbsent(id, k -> new ArrayList<>()).add(ticker.getAsLong());
      Deque<Answer> queue = script.get(id);
      Answer a = queue != null && !queue.isEmpty() ? queue.poll() : defaults.getOrDefault(id, Answer.PASS);
      return switch (a) {
        case PASS -> CompletableFuture.completedFuture(ProbeResult.pass("200"));
        case FAIL -> CompletableFuture.completedFuture(ProbeResult.fail("503"));
        case HANG -> {
          CompletableFuture<ProbeResult> f = new CompletableFuture<>();
          hanging.add(f);
          yield f;
        }
        case THROW -> throw new IllegalStateException("probe exploded");
        case NULL -> null;
        case EXCEPTIONAL -> CompletableFuture.failedFuture(new java.net.ConnectException("connection refused"));
      };
    }

    @Override
    public void forget(Instance target) {
      forgotten.add(target.id() + "@" + target.address());
    }

    @Override
    public void close() {
      closes++;
    }
  }

  @Nested
  class Thresholds {
    @Test
    void nFailuresInARowMarkTheEndpointDownExactlyOnceAndNMinusOneDoNot() {
      prober(config(3, 2));
      probe.always("a", ScriptedProbe.Answer.FAIL);
      publish(instance("a"));

      runProbes("a", 2);
      assertThat(sink).isEmpty();
      assertThat(events).isEmpty();
      assertThat(prober.verdict(key("a"))).contains(Verdict.UNKNOWN);

      runProbes("a", 1);
      assertThat(sink).containsExactly(new Told("a", true));
      assertThat(prober.verdict(key("a"))).contains(Verdict.UNHEALTHY);
      assertThat(prober.downCount()).isEqualTo(1);
      assertThat(events).singleElement().satisfies(e -> {
        assertThat(e.type()).isEqualTo(HealthEvent.Type.PROBE_DOWN);
        assertThat(e.service()).isEqualTo("orders");
        assertThat(e.instance()).isEqualTo("a");
        assertThat(e.detail()).contains("tcp connect").contains("3 failed in a row").contains("503");
      });

      runProbes("a", 5);
      assertThat(sink).as("still down: not reported again").containsExactly(new Told("a", true));
      assertThat(eventTypes()).containsExactly(HealthEvent.Type.PROBE_DOWN);
      assertThat(prober.failures()).isEqualTo(8);
      assertThat(prober.passes()).isZero();
    }

    @Test
    void aPassInBetweenResetsTheFailureCount() {
      prober(config(3, 2));
      probe.script("a", ScriptedProbe.Answer.FAIL, ScriptedProbe.Answer.FAIL, ScriptedProbe.Answer.PASS,
          ScriptedProbe.Answer.FAIL, ScriptedProbe.Answer.FAIL);
      probe.always("a", ScriptedProbe.Answer.FAIL);
      publish(instance("a"));

      runProbes("a", 5);
      assertThat(sink).as("F F P F F: never 3 in a row").isEmpty();
      assertThat(prober.verdict(key("a"))).contains(Verdict.UNKNOWN);

      runProbes("a", 1);
      assertThat(sink).containsExactly(new Told("a", true));
    }

    @Test
    void mPassesAfterDownMarkItUpAndMMinusOneDoNot() {
      prober(config(2, 3));
      probe.script("a", ScriptedProbe.Answer.FAIL, ScriptedProbe.Answer.FAIL);
      publish(instance("a"));
      runProbes("a", 2);
      assertThat(sink).containsExactly(new Told("a", true));

      runProbes("a", 2);
      assertThat(sink).as("2 of 3 passes").containsExactly(new Told("a", true));
      assertThat(prober.verdict(key("a"))).contains(Verdict.UNHEALTHY);

      runProbes("a", 1);
      assertThat(sink).containsExactly(new Told("a", true), new Told("a", false));
      assertThat(prober.verdict(key("a"))).contains(Verdict.HEALTHY);
      assertThat(eventTypes()).containsExactly(HealthEvent.Type.PROBE_DOWN, HealthEvent.Type.PROBE_UP);
      assertThat(events.get(1).instance()).isEqualTo("a");
      assertThat(events.get(1).detail()).contains("3 passed in a row").contains("200");

      runProbes("a", 4);
      assertThat(sink).as("up is reported once").hasSize(2);
      assertThat(events).hasSize(2);
    }

    @Test
    void aFailureAmongThePassesAfterDownStartsTheirCountOver() {
      prober(config(1, 3));
      probe.script("a", ScriptedProbe.Answer.FAIL, ScriptedProbe.Answer.PASS, ScriptedProbe.Answer.PASS,
          ScriptedProbe.Answer.FAIL, ScriptedProbe.Answer.PASS, ScriptedProbe.Answer.PASS);
      publish(instance("a"));

      runProbes("a", 6);
      assertThat(sink).containsExactly(new Told("a", true));

      runProbes("a", 1);
      assertThat(sink).containsExactly(new Told("a", true), new Told("a", false));
    }

    @Test
    void anUnknownEndpointIsNeverReportedDownBeforeNFailuresNorUpWhenItPasses() {
      prober(config(4, 2));
      probe.script("a", ScriptedProbe.Answer.PASS, ScriptedProbe.Answer.FAIL, ScriptedProbe.Answer.FAIL,
          ScriptedProbe.Answer.FAIL);
      publish(instance("a"), instance("b"));

      runProbes("a", 4); // b's first probe was within the first interval: it has passed 3 times by now
      assertThat(probe.checks("b")).isGreaterThanOrEqualTo(3);
      assertThat(prober.verdict(key("a"))).contains(Verdict.UNKNOWN);
      assertThat(prober.verdict(key("b"))).as("b passed twice").contains(Verdict.HEALTHY);
      assertThat(sink).as("UNKNOWN -> HEALTHY is no news to the balancer; 3 < 4 failures").isEmpty();
      assertThat(events).isEmpty();
      assertThat(prober.downCount()).isZero();
      assertThat(prober.lastResult(key("a"))).contains("503");
    }

    @Test
    void aHealthyEndpointGoesDownAfterNFailures() {
      prober(config(2, 1));
      probe.script("a", ScriptedProbe.Answer.PASS, ScriptedProbe.Answer.FAIL);
      probe.always("a", ScriptedProbe.Answer.FAIL);
      publish(instance("a"));

      runProbes("a", 2);
      assertThat(prober.verdict(key("a"))).contains(Verdict.HEALTHY);
      assertThat(sink).isEmpty();
      runProbes("a", 1);
      assertThat(sink).containsExactly(new Told("a", true));
      assertThat(eventTypes()).containsExactly(HealthEvent.Type.PROBE_DOWN);
    }

    @Test
    void endpointsAreJudgedEachOnItsOwn() {
      prober(config(2, 2));
      probe.always("a", ScriptedProbe.Answer.FAIL);
      publish(instance("a"), instance("b"), instance("c"));

      runProbes("a", 3);
      runProbes("b", 3);
      runProbes("c", 3);

      assertThat(sink).containsExactly(new Told("a", true));
      assertThat(prober.probedCount()).isEqualTo(3);
      assertThat(prober.downCount()).isEqualTo(1);
    }
  }

  @Nested
  class Timing {
    @Test
    void theFirstProbeOfEachEndpointIsWithinOneIntervalAndTheyAreSpread() {
      prober(ProbeConfig.tcp().withInterval(INTERVAL), 7);
      List<Instance> instances = new ArrayList<>();
      for (int i = 0; i < 20; i++) {
        instances.add(instance("e" + i));
      }
      long start = ticker.getAsLong();
      publish(instances.toArray(Instance[]::new));

      scheduler.advance(INTERVAL);

      List<Long> firsts = new ArrayList<>();
      for (Instance i : instances) {
        assertThat(probe.times(i.id())).as("%s probed within one interval", i.id()).isNotEmpty();
        long first = probe.times(i.id()).get(0) - start;
        assertThat(first).isBetween(0L, INTERVAL.toNanos() - 1);
        firsts.add(first);
      }
      assertThat(firsts.stream().distinct().count()).as("first probes are spread, not all at once")
          .isGreaterThan(15);
      assertThat(firsts.stream().mapToLong(Long::longValue).max().orElseThrow()
          - firsts.stream().mapToLong(Long::longValue).min().orElseThrow())
          .as("spread over most of the interval").isGreaterThan(INTERVAL.toNanos() / 2);
    }

    @Test
    void jitterKeepsEveryIntervalWithinPlusOrMinusJitterPercent() {
      prober(ProbeConfig.tcp().withInterval(INTERVAL).withJitterPercent(10), 3);
      publish(instance("a"));

      scheduler.advance(Duration.ofSeconds(5 * 60));

      List<Long> gaps = gaps(probe.times("a"));
      assertThat(gaps).hasSizeGreaterThan(40);
      assertThat(gaps).allSatisfy(g -> assertThat(g).isBetween(4_500_000_000L, 5_500_000_000L));
      assertThat(gaps.stream().distinct().count()).as("the intervals are drawn, not fixed").isGreaterThan(30);
      assertThat(gaps).as("both sides of the interval are used")
          .anySatisfy(g -> assertThat(g).isLessThan(4_900_000_000L))
          .anySatisfy(g -> assertThat(g).isGreaterThan(5_100_000_000L));
    }

    @Test
    void aWiderJitterUsesItsWholeRange() {
      prober(ProbeConfig.tcp().withInterval(INTERVAL).withJitterPercent(50), 11);
      publish(instance("a"));

      scheduler.advance(Duration.ofSeconds(5 * 200));

      List<Long> gaps = gaps(probe.times("a"));
      assertThat(gaps).allSatisfy(g -> assertThat(g).isBetween(2_500_000_000L, 7_500_000_000L));
      assertThat(gaps).as("well beyond ±10 %")
          .anySatisfy(g -> assertThat(g).isLessThan(3_500_000_000L))
          .anySatisfy(g -> assertThat(g).isGreaterThan(6_500_000_000L));
    }

    @Test
    void zeroJitterGivesExactIntervals() {
      prober(ProbeConfig.tcp().withInterval(INTERVAL).withJitterPercent(0), 5);
      publish(instance("a"));

      scheduler.advance(Duration.ofSeconds(100));

      List<Long> gaps = gaps(probe.times("a"));
      assertThat(gaps).hasSizeGreaterThanOrEqualTo(18);
      assertThat(gaps).containsOnly(INTERVAL.toNanos());
    }

    @Test
    void theIntervalRunsFromTheEndOfOneProbeToTheStartOfTheNext() {
      prober(config(5, 1));
      probe.script("a", ScriptedProbe.Answer.HANG);
      publish(instance("a"));
      runProbes("a", 1);
      long started = probe.times("a").get(0);

      scheduler.advance(Duration.ofMillis(300).minusNanos(ticker.getAsLong() - started));
      probe.hanging.get(0).complete(ProbeResult.pass("200"));
      long answered = ticker.getAsLong();
      scheduler.advance(INTERVAL.multipliedBy(2));

      assertThat(probe.times("a").get(1) - answered).isEqualTo(INTERVAL.toNanos());
    }

    private List<Long> gaps(List<Long> times) {
      List<Long> gaps = new ArrayList<>();
      for (int i = 1; i < times.size(); i++) {
        gaps.add(times.get(i) - times.get(i - 1));
      }
      return gaps;
    }
  }

  @Nested
  class Failures {
    @Test
    void aProbeThatNeverCompletesFailsAfterTheTimeout() {
      prober(config(1, 1)); // default timeout 1 s
      probe.script("a", ScriptedProbe.Answer.HANG);
      publish(instance("a"));
      runProbes("a", 1);
      long started = probe.times("a").get(0);
      scheduler.advance(Duration.ofNanos(started + Duration.ofMillis(999).toNanos() - ticker.getAsLong()));
      assertThat(prober.failures()).as("not yet timed out at 999 ms").isZero();
      assertThat(sink).isEmpty();

      scheduler.advance(Duration.ofMillis(1));

      assertThat(prober.failures()).isEqualTo(1);
      assertThat(prober.lastResult(key("a"))).contains("timed out after 1000 ms");
      assertThat(sink).containsExactly(new Told("a", true));
      assertThat(events).singleElement()
          .satisfies(e -> assertThat(e.detail()).contains("timed out after 1000 ms"));

      probe.hanging.get(0).complete(ProbeResult.pass("200")); // too late
      assertThat(prober.passes()).isZero();
      assertThat(sink).hasSize(1);
    }

    @Test
    void theTimeoutIsTheConfigsAndTheNextProbeFollowsIt() {
      prober(config(3, 1).withTimeout(Duration.ofMillis(250)));
      probe.always("a", ScriptedProbe.Answer.HANG);
      publish(instance("a"));
      runProbes("a", 1);
      long started = probe.times("a").get(0);

      scheduler.advance(INTERVAL.multipliedBy(3));

      assertThat(prober.lastResult(key("a"))).contains("timed out after 250 ms");
      assertThat(probe.times("a")).hasSizeGreaterThanOrEqualTo(2);
      assertThat(probe.times("a").get(1) - started).as("one probe in flight: the next after timeout + interval")
          .isEqualTo(Duration.ofMillis(250).plus(INTERVAL).toNanos());
    }

    @Test
    void anAnsweredProbeCancelsItsTimeout() {
      prober(config(1, 1));
      publish(instance("a"));
      runProbes("a", 1);

      assertThat(scheduler.pending()).as("only the next probe's timer").isEqualTo(1);
      assertThat(prober.failures()).isZero();
      assertThat(prober.passes()).isEqualTo(1);
    }

    @Test
    void aProbeThatThrowsCountsAsAFailure() {
      prober(config(2, 1));
      probe.always("a", ScriptedProbe.Answer.THROW);
      publish(instance("a"));

      runProbes("a", 1);
      assertThat(prober.failures()).isEqualTo(1);
      assertThat(prober.lastResult(key("a"))).hasValueSatisfying(d -> assertThat(d).contains("probe exploded"));
      assertThat(sink).isEmpty();

      runProbes("a", 1);
      assertThat(sink).containsExactly(new Told("a", true));
      runProbes("a", 1);
      assertThat(probe.checks("a")).as("probing goes on after a throw").isEqualTo(3);
    }

    @Test
    void aProbeThatCompletesExceptionallyOrReturnsNullCountsAsAFailure() {
      prober(config(2, 1));
      probe.script("a", ScriptedProbe.Answer.EXCEPTIONAL, ScriptedProbe.Answer.NULL);
      publish(instance("a"));

      runProbes("a", 1);
      assertThat(prober.lastResult(key("a"))).contains("connection refused");
      runProbes("a", 1);
      assertThat(prober.failures()).isEqualTo(2);
      assertThat(sink).containsExactly(new Told("a", true));
    }
  }

  @Nested
  class SetChanges {
    @Test
    void anEndpointRemovedFromTheSetIsNoLongerProbed() {
      prober(config(2, 2));
      publish(instance("a"), instance("b"));
      runProbes("a", 2);

      publish(instance("b"));
      int checksOfA = probe.checks("a");
      scheduler.advance(INTERVAL.multipliedBy(10));

      assertThat(probe.checks("a")).isEqualTo(checksOfA);
      assertThat(probe.checks("b")).isGreaterThan(8);
      assertThat(prober.probedCount()).isEqualTo(1);
      assertThat(prober.verdict(key("a"))).isEmpty();
      assertThat(probe.forgotten).containsExactly("a@10.0.0.7");
    }

    @Test
    void aResultThatArrivesAfterTheRemovalIsNotReported() {
      prober(config(1, 1));
      probe.script("a", ScriptedProbe.Answer.HANG);
      publish(instance("a"), instance("b"));
      runProbes("a", 1);
      long failuresBefore = prober.failures();

      publish(instance("b"));
      probe.hanging.get(0).complete(ProbeResult.fail("connection refused"));
      scheduler.advance(INTERVAL.multipliedBy(3)); // and its timeout, had it not been answered

      assertThat(sink).isEmpty();
      assertThat(events).isEmpty();
      assertThat(prober.failures()).isEqualTo(failuresBefore);
      assertThat(probe.checks("a")).isEqualTo(1);
    }

    @Test
    void aDownEndpointThatLeavesIsNotLiftedButForgotten() {
      prober(config(1, 1));
      probe.always("a", ScriptedProbe.Answer.FAIL);
      publish(instance("a"));
      runProbes("a", 1);
      assertThat(sink).containsExactly(new Told("a", true));

      publish();

      assertThat(sink).as("the balancer dropped its state with it").containsExactly(new Told("a", true));
      assertThat(prober.probedCount()).isZero();
      assertThat(prober.downCount()).isZero();
    }

    @Test
    void anAddressChangeStartsOverAtUnknownAndLiftsADownVerdict() {
      prober(config(2, 2));
      probe.script("a", ScriptedProbe.Answer.FAIL, ScriptedProbe.Answer.FAIL, ScriptedProbe.Answer.HANG);
      publish(instance("a"));
      runProbes("a", 3); // down, and a probe of the old address in flight
      assertThat(sink).containsExactly(new Told("a", true));

      probe.script("a", ScriptedProbe.Answer.FAIL);
      publish(instance("a").address("10.0.0.8"));

      assertThat(sink).containsExactly(new Told("a", true), new Told("a", false));
      assertThat(prober.verdict(key("a"))).contains(Verdict.UNKNOWN);
      assertThat(probe.forgotten).containsExactly("a@10.0.0.7");

      probe.hanging.get(0).complete(ProbeResult.fail("503")); // the old address's late answer
      runProbes("a", 1);
      assertThat(probe.addresses.get(probe.addresses.size() - 1)).isEqualTo("a@10.0.0.8");
      assertThat(sink).as("one failure of the new address is not two in a row").hasSize(2);
      assertThat(prober.verdict(key("a"))).contains(Verdict.UNKNOWN);
    }

    @Test
    void aPortChangeStartsOverToo() {
      prober(config(1, 1));
      probe.script("a", ScriptedProbe.Answer.FAIL);
      publish(instance("a"));
      runProbes("a", 1);

      publish(instance("a").port(9090));

      assertThat(sink).containsExactly(new Told("a", true), new Told("a", false));
      assertThat(prober.verdict(key("a"))).contains(Verdict.UNKNOWN);
    }

    @Test
    void aChangeThatKeepsTheAddressKeepsTheVerdictAndTheCount() {
      prober(config(2, 2));
      probe.always("a", ScriptedProbe.Answer.FAIL);
      publish(instance("a"));
      runProbes("a", 1);

      publish(instance("a").meta("build", "42"));
      runProbes("a", 1);

      assertThat(sink).as("the first failure still counts").containsExactly(new Told("a", true));
      assertThat(probe.forgotten).isEmpty();
    }

    @Test
    void anEndpointAddedLaterIsProbedWithinOneInterval() {
      prober(config(2, 2));
      publish(instance("a"));
      scheduler.advance(Duration.ofSeconds(12));
      long added = ticker.getAsLong();

      publish(instance("a"), instance("b"));
      scheduler.advance(INTERVAL);

      assertThat(probe.times("b")).isNotEmpty();
      assertThat(probe.times("b").get(0) - added).isBetween(0L, INTERVAL.toNanos());
    }
  }

  @Nested
  class Closing {
    @Test
    void closeStopsEveryProbeAndClosesTheProbe() {
      prober(config(1, 1).withTimeout(Duration.ofSeconds(60))); // b's probe is still in flight at close
      probe.always("b", ScriptedProbe.Answer.HANG);
      publish(instance("a"), instance("b"));
      scheduler.advance(INTERVAL); // the first probes of both
      assertThat(probe.checks("a")).isPositive();
      assertThat(probe.checks("b")).isEqualTo(1);
      int checks = probe.checked.size();

      prober.close();
      probe.hanging.get(0).complete(ProbeResult.fail("503"));
      scheduler.advance(INTERVAL.multipliedBy(10));

      assertThat(probe.checked).hasSize(checks);
      assertThat(probe.closes).isEqualTo(1);
      assertThat(onCloseRuns).hasValue(1);
      assertThat(prober.probedCount()).isZero();
      assertThat(sink).as("the late answer after close is dropped").isEmpty();

      prober.close();
      assertThat(probe.closes).as("idempotent").isEqualTo(1);
      assertThat(onCloseRuns).hasValue(1);
    }

    @Test
    void anUpdateAfterCloseProbesNothing() {
      prober(config(1, 1));
      prober.close();

      publish(instance("a"));
      scheduler.advance(INTERVAL.multipliedBy(3));

      assertThat(probe.checked).isEmpty();
      assertThat(prober.probedCount()).isZero();
      assertThat(scheduler.pending()).isZero();
    }
  }

  @Nested
  class Delivery {
    /**
     * A verdict reached while the listener is still taking the one before (on another thread) waits for it: the
     * listener is called one event at a time, in the order of the verdicts. Before, the second thread delivered
     * its own event at once, beside the first, so a thread descheduled between its verdict and its delivery could
     * reach the listener after a later verdict (the lab saw probe_up printed before the probe_down it followed).
     */
    @Test
    void aVerdictReachedWhileTheListenerTakesTheLastOneIsDeliveredAfterItOnTheSameThread() throws Exception {
      java.util.concurrent.CountDownLatch downEntered = new java.util.concurrent.CountDownLatch(1);
      java.util.concurrent.CountDownLatch releaseDown = new java.util.concurrent.CountDownLatch(1);
      AtomicInteger inside = new AtomicInteger();
      List<String> seen = java.util.Collections.synchronizedList(new ArrayList<>());
      SplittableRandom random = new SplittableRandom(5);
      prober = new Prober("orders", config(1, 1), probe, scheduler::schedule, () -> random,
          (key, down) -> { }, event -> {
            if (inside.incrementAndGet() != 1) {
              seen.add("overlap at " + event.type());
            }
            seen.add(event.type() + " on " + Thread.currentThread().getName());
            if (event.type() == HealthEvent.Type.PROBE_DOWN) {
              downEntered.countDown();
              try {
                releaseDown.await(10, java.util.concurrent.TimeUnit.SECONDS);
              } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
              }
            }
            inside.decrementAndGet();
          }, null);
      probe.script("a", ScriptedProbe.Answer.HANG); // then PASS
      publish(instance("a"));
      runProbes("a", 1);

      Thread answering = new Thread(() -> probe.hanging.get(0).complete(ProbeResult.fail("503")), "answering");
      answering.start();
      assertThat(downEntered.await(10, java.util.concurrent.TimeUnit.SECONDS)).isTrue();
      runProbes("a", 1); // passes on this thread while the listener still holds probe_down
      List<String> whileHeld = List.copyOf(seen);
      releaseDown.countDown();
      answering.join(10_000);

      assertThat(whileHeld).containsExactly("PROBE_DOWN on answering");
      assertThat(seen).containsExactly("PROBE_DOWN on answering", "PROBE_UP on answering");
    }
  }

  @Nested
  class WithABalancer {
    /** The classes of the monitors the current thread holds. */
    private List<String> monitorsHeld() {
      ThreadInfo info = ManagementFactory.getThreadMXBean()
          .getThreadInfo(new long[] {Thread.currentThread().getId()}, true, false)[0];
      return Arrays.stream(info.getLockedMonitors()).map(MonitorInfo::getClassName).toList();
    }

    private Balancer balancer(HealthListener listener) {
      SplittableRandom random = new SplittableRandom(1);
      return new Balancer(BalancerConfig.defaults(), OutlierDetector.disabled(ticker), ticker, () -> random, null,
          "orders", listener);
    }

    @Test
    void verdictsReachTheBalancer() {
      Balancer balancer = balancer(events::add);
      SplittableRandom random = new SplittableRandom(3);
      prober = new Prober("orders", config(1, 1), probe, scheduler::schedule, () -> random,
          balancer, events::add, null);
      probe.script("a", ScriptedProbe.Answer.FAIL);
      EndpointSet set = EndpointSet.of(1, List.of(instance("a"), instance("b")));
      EndpointDelta delta = EndpointDelta.between(EndpointDelta.Kind.SNAPSHOT, EndpointSet.EMPTY, set);
      balancer.update(set, delta);
      prober.update(set, delta);

      runProbes("a", 1);
      assertThat(balancer.availableCount()).isEqualTo(1);
      assertThat(balancer.pick().instance().id()).isEqualTo("b");

      runProbes("a", 1);
      assertThat(balancer.availableCount()).isEqualTo(2);
      assertThat(eventTypes()).containsExactly(HealthEvent.Type.PROBE_DOWN, HealthEvent.Type.PROBE_UP);
    }

    @Test
    void eventsCausedByAVerdictAreNotDeliveredUnderTheProbersLock() {
      List<String> heldAtEvents = new ArrayList<>();
      HealthListener listener = e -> {
        events.add(e);
        heldAtEvents.addAll(monitorsHeld());
      };
      Balancer balancer = balancer(listener);
      SplittableRandom random = new SplittableRandom(3);
      prober = new Prober("orders", config(1, 1), probe, scheduler::schedule, () -> random,
          balancer, listener, null);
      probe.script("a", ScriptedProbe.Answer.FAIL);
      EndpointSet set = EndpointSet.of(1, List.of(instance("a")));
      EndpointDelta delta = EndpointDelta.between(EndpointDelta.Kind.SNAPSHOT, EndpointSet.EMPTY, set);
      balancer.update(set, delta);
      prober.update(set, delta);

      runProbes("a", 2); // down (the only endpoint: panic), then up again

      assertThat(eventTypes()).contains(HealthEvent.Type.PANIC_ON, HealthEvent.Type.PANIC_OFF,
          HealthEvent.Type.PROBE_DOWN, HealthEvent.Type.PROBE_UP);
      assertThat(heldAtEvents).as("monitors held while the listener ran").isEmpty();
    }
  }

  @Test
  void theConfigIsTheOneGiven() {
    ProbeConfig c = config(3, 4);
    prober(c);
    assertThat(prober.config()).isSameAs(c);
  }
}
