package dev.muster.registry.internal;

import static dev.muster.registry.RegistrationEvent.Type.DRAINED;
import static dev.muster.registry.RegistrationEvent.Type.DRAINING;
import static dev.muster.registry.RegistrationEvent.Type.FAILED;
import static dev.muster.registry.RegistrationEvent.Type.KEEPALIVE;
import static dev.muster.registry.RegistrationEvent.Type.LEASE_LOST;
import static dev.muster.registry.RegistrationEvent.Type.RECONNECTED;
import static dev.muster.registry.RegistrationEvent.Type.REGISTERED;
import static dev.muster.registry.RegistrationEvent.Type.REREGISTERED;
import static dev.muster.registry.RegistrationEvent.Type.REVOKED;
import static dev.muster.registry.RegistrationEvent.Type.UNREACHABLE;
import static dev.muster.registry.RegistrationEvent.Type.UPDATED;
import static org.assertj.core.api.Assertions.assertThat;

import dev.muster.DuplicateInstanceException;
import dev.muster.InvalidInputException;
import dev.muster.RegistryUnavailableException;
import dev.muster.internal.SerialExecutor;
import dev.muster.registry.Instance;
import dev.muster.registry.InstanceState;
import dev.muster.registry.RegistrarConfig;
import dev.muster.registry.RegistrationEvent;
import dev.muster.registry.RegistrationEvent.Type;
import dev.muster.registry.RegistrationState;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.random.RandomGenerator;
import org.junit.jupiter.api.Nested;
import org.junit.jupiter.api.Test;

/**
 * The registrar's state machine against a one-key fake etcd on a fake clock: every transition of SPEC §3, each
 * timer checked to fire exactly when due and not a nanosecond earlier. Backoff always takes the top of its window
 * (a random source that answers its bound), so retry times are exact: 100, 200, 400, 800, 1000 ms.
 */
class RegistrarDriverTest {
  private static final Duration NANO = Duration.ofNanos(1);
  private static final String KEY = "/muster/default/orders/v1/i1";
  /** TTL 3 s, keepalive 1 s, drain 2 s, request timeout 1 s (all derived), retry base 100 ms. */
  private static final RegistrarConfig CONFIG = RegistrarConfig.builder().ttl(Duration.ofSeconds(3))
      .startTimeout(Duration.ofSeconds(5)).shutdownHook(false).build();
  private static final Instance INSTANCE = Instance.of("orders", "10.0.0.7", 8080).id("i1");

  private final FakeLoop loop = new FakeLoop();
  private final FakeEtcd etcd = new FakeEtcd(loop);
  private final List<RegistrationEvent> events = new ArrayList<>();
  private RegistrarDriver driver = driver(CONFIG, RegistrarControls.PRODUCTION);

  private RegistrarDriver driver(RegistrarConfig config, RegistrarControls controls) {
    return new RegistrarDriver(KEY, "[http://127.0.0.1:2379]", INSTANCE, config, controls, etcd, loop,
        loop.clock(), loop::nanoTime, new TopOfWindow(), events::add);
  }

  private void use(RegistrarConfig config, RegistrarControls controls) {
    driver = driver(config, controls);
  }

  /** Backoff's delay is {@code nextLong(ceiling + 1)}: answering {@code bound - 1} makes it the ceiling. */
  private static final class TopOfWindow implements RandomGenerator {
    @Override
    public long nextLong() {
      throw new AssertionError("not used by Backoff");
    }

    @Override
    public long nextLong(long bound) {
      return bound - 1;
    }
  }

  private List<Type> types() {
    return events.stream().map(RegistrationEvent::type).toList();
  }

  private RegistrationEvent last(Type type) {
    return events.stream().filter(e -> e.type() == type).reduce((a, b) -> b).orElseThrow();
  }

  private static Duration ms(long millis) {
    return Duration.ofMillis(millis);
  }

  /** Advances exactly {@code delay}, checking that no call and no event happens a nanosecond before it ends. */
  private void advanceExactly(Duration delay) {
    int calls = etcd.journal.size();
    int seen = events.size();
    loop.advance(delay.minus(NANO));
    assertThat(etcd.journalSince(calls)).as("no call before %s", delay).isEmpty();
    assertThat(events).as("no event before %s", delay).hasSize(seen);
    loop.advance(NANO);
  }

  private void register() {
    driver.start();
    assertThat(driver.started()).isCompleted();
  }

  private static Throwable failure(CompletableFuture<?> f) {
    assertThat(f).isCompletedExceptionally();
    try {
      f.get();
      throw new AssertionError("not failed");
    } catch (ExecutionException e) {
      return e.getCause();
    } catch (InterruptedException e) {
      throw new AssertionError(e);
    }
  }

  @Nested
  class Starting {
    @Test
    void grantsThenPutsIfAbsentAndReportsRegistered() {
      register();

      assertThat(etcd.journal).containsExactly("0ms grant", "0ms putIfAbsent 1");
      assertThat(types()).containsExactly(REGISTERED);
      assertThat(last(REGISTERED).revision()).isEqualTo(etcd.revision);
      assertThat(driver.leaseId()).isEqualTo(1);
      assertThat(driver.state()).isEqualTo(RegistrationState.ACTIVE);
      assertThat(etcd.holder).isEqualTo(1);
    }

    @Test
    void theFirstKeepaliveIsDueOneIntervalAfterTheGrantNotAfterASlowPut() {
      etcd.callTime = ms(300); // grant and put take 300 ms each: the put ends 600 ms after the grant began

      register();
      assertThat(loop.elapsed()).isEqualTo(ms(600));

      advanceExactly(ms(700)); // 1000 ms after the grant returned at 300 ms
      assertThat(etcd.journal).last().isEqualTo("1300ms keepAlive 1");
    }

    @Test
    void aPutWhoseAnswerWasLostButWhichWasAppliedIsRecognisedAsOursOnTheRetryUnderTheSameLease() {
      etcd.losePutAnswer = true;

      driver.start();
      assertThat(driver.started()).isNotDone();
      advanceExactly(ms(100));

      assertThat(driver.started()).isCompleted();
      assertThat(types()).containsExactly(REGISTERED).doesNotContain(FAILED);
      assertThat(driver.leaseId()).as("the first lease holds the key").isEqualTo(1);
      assertThat(etcd.journal).as("the retry renews the attempt's lease and puts under it again, granting none")
          .containsExactly("0ms grant", "0ms putIfAbsent 1", "0ms connectionFailed", "100ms keepAlive 1", "100ms putIfAbsent 1");
      assertThat(etcd.leases).containsOnlyKeys(1L);
    }

    @Test
    void theLeaseARetryRenewedIsNextRenewedOneIntervalAfterThatRenewal() {
      etcd.losePutAnswer = true; // lease 1 holds the key from 0 ms on; the retry at 100 ms renews it

      driver.start();
      advanceExactly(ms(100));
      assertThat(driver.leaseId()).isEqualTo(1);

      advanceExactly(ms(1000));
      assertThat(etcd.journal).last().isEqualTo("1100ms keepAlive 1");
    }

    @Test
    void aKeyWrittenByAnAnswerLostPutOutlivesRetriesLongerThanTheTtl() {
      // etcd under load: it applies every call and answers each after the deadline, for 4 s with a 3 s TTL. A new
      // lease per retry left lease 1 unrenewed: it expired at 3 s with the key, which a consumer saw leave.
      etcd.leasesExpire = true;
      etcd.losePutAnswer = true;
      driver.start();
      etcd.answersLate = true;
      loop.advance(Duration.ofSeconds(4));
      assertThat(driver.started()).isNotDone();
      etcd.answersLate = false;
      loop.advance(Duration.ofSeconds(1));

      assertThat(driver.started()).isCompleted();
      assertThat(etcd.expiredKeys).as("the key never left etcd").isZero();
      assertThat(driver.leaseId()).isEqualTo(1);
      assertThat(etcd.holder).isEqualTo(1);
      assertThat(etcd.journal).filteredOn(c -> c.endsWith("grant")).as("one lease asked for").hasSize(1);
      assertThat(types()).containsExactly(REGISTERED);
    }

    @Test
    void aRetryWhoseLeaseEtcdNoLongerKnowsGrantsANewOne() {
      etcd.leasesExpire = true;
      etcd.losePutAnswer = true;
      driver.start(); // lease 1 granted, the put applied, its answer lost
      etcd.down = true;
      loop.advance(Duration.ofMillis(3500)); // lease 1 is not renewed for longer than its 3 s TTL
      etcd.down = false;
      loop.advance(Duration.ofSeconds(1));

      assertThat(driver.started()).isCompleted();
      assertThat(etcd.expiredKeys).as("lease 1 expired with its key while etcd was down").isEqualTo(1);
      assertThat(driver.leaseId()).isEqualTo(2);
      assertThat(etcd.holder).isEqualTo(2);
      assertThat(etcd.leases).containsOnlyKeys(2L);
    }

    @Test
    void anIdHeldByAnotherLeaseFailsTheStartNamingTheHolderAndRevokesOurLease() {
      long other = etcd.takenBySomeoneElse();

      driver.start();

      assertThat(failure(driver.started())).isInstanceOfSatisfying(DuplicateInstanceException.class, e -> {
        assertThat(e.key()).isEqualTo(KEY);
        assertThat(e.holderLease()).isEqualTo(other);
        assertThat(e.holderTtl()).isEqualTo(Duration.ofSeconds(7));
      });
      assertThat(etcd.journal).containsExactly("0ms grant", "0ms putIfAbsent 1", "0ms remaining 900",
          "0ms revoke 1");
      assertThat(etcd.holder).isEqualTo(other);
      assertThat(driver.closed()).isCompleted();
      assertThat(driver.state()).isEqualTo(RegistrationState.CLOSED);
      assertThat(events).isEmpty();
      assertThat(loop.pendingTasks()).isZero();
    }

    @Test
    void whileEtcdIsUnreachableItRetriesWithBackoffAndReportsEachFailureToTheConnection() {
      etcd.down = true;
      driver.start();
      assertThat(etcd.resets).as("the first failure is reported at once").isEqualTo(1);
      advanceExactly(ms(100));
      assertThat(etcd.resets).isEqualTo(2);
      advanceExactly(ms(200));
      assertThat(etcd.resets).isEqualTo(3);
      advanceExactly(ms(400));
      assertThat(etcd.resets).isEqualTo(4);
      etcd.down = false;
      advanceExactly(ms(800));

      assertThat(driver.started()).isCompleted();
      assertThat(etcd.journal).containsExactly("0ms grant", "0ms connectionFailed", "100ms grant",
          "100ms connectionFailed", "300ms grant", "300ms connectionFailed", "700ms grant", "700ms connectionFailed",
          "1500ms grant", "1500ms putIfAbsent 1");
      assertThat(etcd.resets).as("the success is not a failure").isEqualTo(4);
      assertThat(types()).containsExactly(REGISTERED);
    }

    @Test
    void etcdUnreachableForTheWholeStartTimeoutFailsTheStartWithTheTimeoutInTheMessage() {
      etcd.down = true;
      driver.start();
      loop.advance(Duration.ofSeconds(5).minus(NANO));
      assertThat(driver.started()).isNotDone();

      loop.advance(Duration.ofSeconds(2));

      assertThat(failure(driver.started())).isInstanceOf(RegistryUnavailableException.class)
          .hasMessageContaining("did not answer within 5000 ms").hasMessageContaining("etcd unreachable")
          .as("a library message speaks of the library, not the CLI").hasMessageNotContaining("--endpoints");
      assertThat(driver.closed()).isCompleted();
      assertThat(loop.pendingTasks()).isZero();
      assertThat(events).isEmpty();
    }

    @Test
    void aRefusalFailsTheStartAtOnceWithoutRetrying() {
      etcd.refusing = true;
      driver.start();

      assertThat(failure(driver.started())).isInstanceOf(RegistryUnavailableException.class)
          .hasMessageContaining("refused to register " + KEY).hasMessageContaining("permission denied");
      assertThat(loop.pendingTasks()).isZero();
    }
  }

  /** Issue 19 §1: a first registration may use a lease the registry granted ahead, and only a first one. */
  @Nested
  class LeaseGrantedAhead {
    @Test
    void aFirstRegistrationUnderALeaseGrantedAheadIsOnePutAndItsFirstKeepaliveCountsFromThatGrant() {
      long ahead = etcd.grantAhead(3, ms(400));

      register();

      assertThat(etcd.journal).containsExactly("0ms lease ahead " + ahead, "0ms putIfAbsent " + ahead);
      assertThat(driver.leaseId()).isEqualTo(ahead);
      assertThat(types()).containsExactly(REGISTERED);
      advanceExactly(ms(600)); // granted 400 ms before the start: its first keepalive is due 1 s after that
      assertThat(etcd.journal).last().isEqualTo("600ms keepAlive " + ahead);
    }

    @Test
    void aLeaseGrantedAheadThatEtcdNoLongerKnowsIsReplacedInTheSameAttempt() {
      long ahead = etcd.grantAhead(3, ms(100));
      etcd.expire(ahead);

      register();

      assertThat(etcd.journal).containsExactly("0ms lease ahead " + ahead, "0ms putIfAbsent " + ahead,
          "0ms grant", "0ms putIfAbsent 2");
      assertThat(driver.leaseId()).isEqualTo(2);
      assertThat(types()).containsExactly(REGISTERED);
      advanceExactly(ms(1000)); // the new lease's own grant time, not the gone one's
      assertThat(etcd.journal).last().isEqualTo("1000ms keepAlive 2");
    }

    @Test
    void anIdHeldByAnotherLeaseRevokesTheLeaseGrantedAheadAsItWouldItsOwn() {
      long other = etcd.takenBySomeoneElse();
      long ahead = etcd.grantAhead(3, ms(100));

      driver.start();

      assertThat(failure(driver.started())).isInstanceOfSatisfying(DuplicateInstanceException.class,
          e -> assertThat(e.holderLease()).isEqualTo(other));
      assertThat(etcd.journal).containsExactly("0ms lease ahead " + ahead, "0ms putIfAbsent " + ahead,
          "0ms remaining 900", "0ms revoke " + ahead);
      assertThat(etcd.leases).containsOnlyKeys(other);
    }

    @Test
    void aReregistrationAfterALostLeaseGrantsAfreshAndNeverTakesALeaseGrantedAhead() {
      register();
      etcd.expire(1);
      long ahead = etcd.grantAhead(3, ms(0));

      advanceExactly(ms(1000));

      assertThat(types()).containsExactly(REGISTERED, LEASE_LOST, REREGISTERED);
      assertThat(etcd.journal).containsSubsequence("1000ms keepAlive 1", "1000ms grant", "1000ms putIfAbsent 3")
          .doesNotContain("1000ms lease ahead " + ahead);
      assertThat(driver.leaseId()).isEqualTo(3);
    }
  }

  @Nested
  class KeepingAlive {
    @Test
    void aKeepaliveEveryIntervalOnTheSameLease() {
      register();
      for (int i = 1; i <= 3; i++) {
        advanceExactly(ms(1000));
        assertThat(etcd.journal).last().isEqualTo(i * 1000 + "ms keepAlive 1");
      }
      assertThat(types()).containsExactly(REGISTERED);
    }

    /** What a keepalive observer was told, and how many events had been emitted by then. */
    record Answer(String id, long lease, Duration ttl, Duration answeredIn, int eventsBefore) {}

    @Test
    void keepalivesAreReportedOnlyWhenTheLabAsksForThemAndTheirAnswerTimeOnlyToTheObserver() {
      List<Answer> answers = new ArrayList<>();
      use(CONFIG, RegistrarControls.PRODUCTION.withReportKeepalives(true).withKeepaliveObserver(
          (id, lease, ttl, answeredIn) -> answers.add(new Answer(id, lease, ttl, answeredIn, events.size()))));
      register();
      etcd.callTime = ms(7);
      advanceExactly(ms(1000));

      assertThat(types()).containsExactly(REGISTERED, KEEPALIVE);
      assertThat(last(KEEPALIVE).detail()).isEqualTo("ttl 3s; answered in 7000 us");
      assertThat(last(KEEPALIVE).ttl()).isEqualTo(Duration.ofSeconds(3));
      assertThat(answers).as("told just before the keepalive's event")
          .containsExactly(new Answer("i1", 1, Duration.ofSeconds(3), ms(7), 1));
    }

    @Test
    void aKeepaliveObserverAloneIsToldEveryAnswerWithoutKeepaliveEvents() {
      List<Answer> answers = new ArrayList<>();
      use(CONFIG, RegistrarControls.PRODUCTION.withKeepaliveObserver(
          (id, lease, ttl, answeredIn) -> answers.add(new Answer(id, lease, ttl, answeredIn, events.size()))));
      register();
      etcd.callTime = ms(3);
      advanceExactly(ms(1000));
      advanceExactly(ms(1000));

      assertThat(types()).containsExactly(REGISTERED);
      assertThat(answers).extracting(Answer::answeredIn).containsExactly(ms(3), ms(3));
    }

    @Test
    void aThrowingKeepaliveObserverDoesNotStopTheKeepalives() {
      use(CONFIG, RegistrarControls.PRODUCTION.withKeepaliveObserver((id, lease, ttl, answeredIn) -> {
        throw new IllegalStateException("observer bug");
      }));
      register();
      for (int i = 1; i <= 2; i++) {
        advanceExactly(ms(1000));
        assertThat(etcd.journal).last().isEqualTo(i * 1000 + "ms keepAlive 1");
      }
      assertThat(driver.state()).isEqualTo(RegistrationState.ACTIVE);
    }

    @Test
    void unreachableThenBackKeepsTheSameLeaseAndReportsReconnected() {
      register();
      etcd.down = true;
      advanceExactly(ms(1000));
      assertThat(driver.state()).isEqualTo(RegistrationState.UNREACHABLE);
      assertThat(types()).containsExactly(REGISTERED, UNREACHABLE);
      assertThat(last(UNREACHABLE).detail()).contains("etcd unreachable");

      assertThat(etcd.resets).as("the failed keepalive was reported").isEqualTo(1);
      advanceExactly(ms(100));
      assertThat(etcd.resets).as("and its retry").isEqualTo(2);
      advanceExactly(ms(200));
      etcd.down = false;
      advanceExactly(ms(400));

      assertThat(driver.state()).isEqualTo(RegistrationState.ACTIVE);
      assertThat(types()).containsExactly(REGISTERED, UNREACHABLE, RECONNECTED);
      assertThat(last(RECONNECTED).detail()).isEqualTo("the same lease continues (ttl 3s)");
      assertThat(driver.leaseId()).isEqualTo(1);
      advanceExactly(ms(1000));
      assertThat(etcd.journal).last().isEqualTo("2700ms keepAlive 1");
    }

    @Test
    void theBackoffGrowsUpToTheKeepaliveInterval() {
      register();
      etcd.down = true;
      loop.advance(ms(1000));
      int mark = etcd.journal.size();
      for (long delay : new long[] {100, 200, 400, 800, 1000, 1000}) {
        advanceExactly(ms(delay));
      }
      assertThat(etcd.journalSince(mark).stream().filter(c -> c.contains("keepAlive")))
          .containsExactly("1100ms keepAlive 1", "1300ms keepAlive 1", "1700ms keepAlive 1", "2500ms keepAlive 1",
              "3500ms keepAlive 1", "4500ms keepAlive 1");
    }

    @Test
    void withMaxFailuresItGivesUpAfterThatManyConsecutiveFailuresAndStopsCalling() {
      use(CONFIG.toBuilder().maxFailures(3).build(), RegistrarControls.PRODUCTION);
      register();
      etcd.down = true;
      advanceExactly(ms(1000));
      advanceExactly(ms(100));
      assertThat(driver.state()).isEqualTo(RegistrationState.UNREACHABLE);
      advanceExactly(ms(200));

      assertThat(driver.state()).isEqualTo(RegistrationState.FAILED);
      assertThat(types()).containsExactly(REGISTERED, UNREACHABLE, FAILED);
      assertThat(last(FAILED).detail()).startsWith("gave up after 3 consecutive failed calls to etcd at "
          + "[http://127.0.0.1:2379] (last: could not keepAlive 1: etcd unreachable)");
      int mark = etcd.journal.size();
      loop.advance(Duration.ofMinutes(1));
      assertThat(etcd.journalSince(mark)).isEmpty();
      assertThat(loop.pendingTasks()).isZero();
    }

    @Test
    void aSuccessResetsTheFailureCountSoOnlyConsecutiveFailuresCount() {
      use(CONFIG.toBuilder().maxFailures(2).build(), RegistrarControls.PRODUCTION);
      register();
      etcd.down = true;
      loop.advance(ms(1000));
      etcd.down = false;
      loop.advance(ms(100)); // reconnected
      etcd.down = true;
      loop.advance(ms(1000));

      assertThat(driver.state()).isEqualTo(RegistrationState.UNREACHABLE);
      assertThat(types()).containsExactly(REGISTERED, UNREACHABLE, RECONNECTED, UNREACHABLE);
    }
  }

  @Nested
  class LeaseLost {
    @Test
    void aLeaseGoneBehindItsBackIsReplacedAtOnceAndTheKeyWrittenAgain() {
      register();
      etcd.expire(1);
      advanceExactly(ms(1000));

      assertThat(types()).containsExactly(REGISTERED, LEASE_LOST, REREGISTERED);
      assertThat(last(LEASE_LOST).detail()).isEqualTo("re-registering with a new lease");
      assertThat(etcd.journal).containsSubsequence("1000ms keepAlive 1", "1000ms grant", "1000ms putIfAbsent 2");
      assertThat(driver.leaseId()).isEqualTo(2);
      assertThat(etcd.holder).isEqualTo(2);
      assertThat(driver.state()).isEqualTo(RegistrationState.ACTIVE);
      advanceExactly(ms(1000));
      assertThat(etcd.journal).last().isEqualTo("2000ms keepAlive 2");
    }

    @Test
    void aReregistrationThatCannotReachEtcdIsRetriedWithBackoffInStateLeaseLost() {
      register();
      etcd.expire(1);
      etcd.failingGrants = 2;
      advanceExactly(ms(1000));
      assertThat(driver.state()).isEqualTo(RegistrationState.LEASE_LOST);
      advanceExactly(ms(100));
      assertThat(driver.state()).isEqualTo(RegistrationState.LEASE_LOST);
      advanceExactly(ms(200));

      assertThat(etcd.journal.stream().filter(c -> c.contains("grant")))
          .containsExactly("0ms grant", "1000ms grant", "1100ms grant", "1300ms grant");
      assertThat(types()).containsExactly(REGISTERED, LEASE_LOST, REREGISTERED).doesNotContain(UNREACHABLE);
      assertThat(driver.state()).isEqualTo(RegistrationState.ACTIVE);
    }

    /** Issue 35: the holder may be this provider's own earlier key on a lease etcd has not expired yet. */
    @Test
    void whenTheReregistrationFindsTheIdTakenItRetriesAndRegistersOnceTheHolderIsGone() {
      register();
      etcd.expire(1);
      long other = etcd.takenBySomeoneElse(); // 7 s left on its lease, which nobody renews
      loop.advance(ms(1000));
      assertThat(driver.state()).isEqualTo(RegistrationState.LEASE_LOST);
      loop.advance(Duration.ofSeconds(3));
      etcd.expire(other);

      loop.advance(Duration.ofSeconds(5)); // the retry comes once the holder's 7 s could have passed

      assertThat(driver.state()).isEqualTo(RegistrationState.ACTIVE);
      assertThat(types()).containsExactly(REGISTERED, LEASE_LOST, REREGISTERED);
      assertThat(etcd.leases).doesNotContainKey(other);
    }

    @Test
    void whenTheIdStaysTakenTheReregistrationFailsAfterTwiceTheTtlAndFiveSeconds() {
      register();
      etcd.expire(1);
      long other = etcd.takenBySomeoneElse();
      loop.advance(ms(1000)); // the keepalive finds the lease gone; the re-registration finds the id taken
      for (int s = 0; s < 10; s++) { // its holder keeps it: 10 s, under 2 x 3 s + 5 s
        etcd.keepAlive(other);
        loop.advance(Duration.ofSeconds(1));
      }
      assertThat(driver.state()).isEqualTo(RegistrationState.LEASE_LOST);

      for (int s = 0; s < 3; s++) {
        etcd.keepAlive(other);
        loop.advance(Duration.ofSeconds(1));
      }

      assertThat(driver.state()).isEqualTo(RegistrationState.FAILED);
      assertThat(types()).containsExactly(REGISTERED, LEASE_LOST, FAILED);
      assertThat(last(FAILED).detail()).contains(Long.toHexString(other)).contains("still held after 11 s of retries");
      assertThat(etcd.leases).containsOnlyKeys(other);
    }

    @Test
    void reregistrationUnreachableIsRetriedUntilEtcdAnswers() {
      register();
      etcd.expire(1);
      etcd.down = true;
      loop.advance(ms(1000)); // the keepalive itself fails: UNREACHABLE, not yet LEASE_LOST
      etcd.down = false;
      advanceExactly(ms(100));

      assertThat(types()).containsExactly(REGISTERED, UNREACHABLE, LEASE_LOST, REREGISTERED);
      assertThat(driver.state()).isEqualTo(RegistrationState.ACTIVE);
      assertThat(driver.leaseId()).isEqualTo(2);
    }

    @Test
    void withReregistrationOffTheDeadLeaseIdKeepsBeingRenewedAndTheKeyStaysGone() {
      use(CONFIG, RegistrarControls.PRODUCTION.withReregister(false));
      register();
      etcd.expire(1);
      advanceExactly(ms(1000));
      advanceExactly(ms(1000));

      assertThat(types()).containsExactly(REGISTERED, LEASE_LOST);
      assertThat(last(LEASE_LOST).detail()).isEqualTo("re-registration is off: renewing the dead lease id");
      assertThat(etcd.journal).containsExactly("0ms grant", "0ms putIfAbsent 1", "1000ms keepAlive 1",
          "2000ms keepAlive 1");
      assertThat(driver.state()).isEqualTo(RegistrationState.LEASE_LOST);
      assertThat(etcd.holder).isZero();
    }
  }

  @Nested
  class Updating {
    /**
     * What {@code LiveRegistration} does, on its serial executor: {@code register()} runs the start on the caller's
     * thread (the loop is idle), so REGISTERED reaches the listener there, inside {@code register()}. A listener
     * that calls {@code update()} from it submits to the same loop from the thread that holds its run permit: the
     * update must queue behind the start (which has not completed {@code started()} yet), not run inside it, and the
     * loop must hand it to the pool once the caller is done.
     */
    @Test
    void anUpdateFromTheListenerDuringRegisterIsQueuedBehindTheStartAndWrittenAfterIt() {
      List<Runnable> lent = new ArrayList<>();
      SerialExecutor serial = new SerialExecutor(lent::add);
      CompletableFuture<Instance> result = new CompletableFuture<>();
      List<Thread> listenedOn = new ArrayList<>();
      driver = new RegistrarDriver(KEY, "[http://127.0.0.1:2379]", INSTANCE, CONFIG, RegistrarControls.PRODUCTION,
          etcd, loop, loop.clock(), loop::nanoTime, new TopOfWindow(), event -> {
            events.add(event);
            listenedOn.add(Thread.currentThread());
            if (event.type() == REGISTERED) {
              serial.execute(() -> driver.update(i -> i.weight(7), result)); // what LiveRegistration.update does
            }
          });

      boolean ranHere = serial.runOrQueue(driver::start);

      assertThat(ranHere).as("an idle loop: the caller ran the start").isTrue();
      assertThat(driver.started()).isCompleted();
      assertThat(listenedOn).containsExactly(Thread.currentThread());
      assertThat(result).as("queued, not run inside the start").isNotDone();
      assertThat(lent).as("handed to the pool when the caller released the loop").hasSize(1);
      lent.remove(0).run();
      assertThat(result).isCompletedWithValue(INSTANCE.weight(7));
      assertThat(types()).containsExactly(REGISTERED, UPDATED);
      assertThat(etcd.journal).containsExactly("0ms grant", "0ms putIfAbsent 1", "0ms put 1 UP");
    }

    @Test
    void anUpdateIsWrittenOnTheSameLease() {
      register();
      CompletableFuture<Instance> result = new CompletableFuture<>();
      driver.update(i -> i.weight(7), result);

      assertThat(result).isCompletedWithValue(INSTANCE.weight(7));
      assertThat(etcd.value.weight()).isEqualTo(7);
      assertThat(types()).containsExactly(REGISTERED, UPDATED);
    }

    @Test
    void anUpdateThatChangesTheIdentityIsRefused() {
      register();
      CompletableFuture<Instance> result = new CompletableFuture<>();
      driver.update(i -> i.id("someone-else"), result);

      assertThat(failure(result)).isInstanceOf(InvalidInputException.class)
          .hasMessageContaining("not namespace, service, version or id");
    }

    @Test
    void anUpdateWhileTheLeaseIsLostIsWrittenByTheReregistration() {
      use(CONFIG, RegistrarControls.PRODUCTION);
      register();
      etcd.expire(1);
      etcd.down = true;
      loop.advance(ms(1000));
      etcd.down = false;
      CompletableFuture<Instance> result = new CompletableFuture<>();
      driver.update(i -> i.weight(9), result); // finds the lease gone: LEASE_LOST, re-registers with weight 9

      assertThat(result).isCompletedWithValue(INSTANCE.weight(9));
      assertThat(types()).containsSubsequence(LEASE_LOST, REREGISTERED);
      assertThat(etcd.value.weight()).isEqualTo(9);
    }

    @Test
    void anUpdateThatCannotReachEtcdFailsAndKeepsTheOldValue() {
      register();
      etcd.down = true;
      CompletableFuture<Instance> result = new CompletableFuture<>();
      driver.update(i -> i.weight(7), result);

      assertThat(failure(result)).isInstanceOf(RegistryUnavailableException.class)
          .hasMessageContaining("could not update " + KEY);
      assertThat(driver.instance()).isEqualTo(INSTANCE);
    }
  }

  @Nested
  class Closing {
    @Test
    void closePublishesDrainingKeepsTheLeaseAliveForTheDrainThenRevokes() {
      register();
      loop.advance(ms(400));
      driver.close();
      assertThat(driver.state()).isEqualTo(RegistrationState.DRAINING);
      assertThat(etcd.journal).last().isEqualTo("400ms put 1 DRAINING");
      assertThat(etcd.value.state()).isEqualTo(InstanceState.DRAINING);
      assertThat(last(DRAINING).detail()).isEqualTo("drain 2000 ms");

      advanceExactly(ms(1000));
      assertThat(etcd.journal).last().isEqualTo("1400ms keepAlive 1");
      advanceExactly(ms(1000));

      // The drain timer was set before the second keepalive was: due at the same instant, it runs first.
      assertThat(etcd.journal).containsExactly("0ms grant", "0ms putIfAbsent 1", "400ms put 1 DRAINING",
          "1400ms keepAlive 1", "2400ms revoke 1");
      assertThat(types()).containsExactly(REGISTERED, DRAINING, REVOKED);
      assertThat(driver.state()).isEqualTo(RegistrationState.CLOSED);
      assertThat(driver.closed()).isCompleted();
      assertThat(driver.leftBehind()).isEmpty();
      assertThat(etcd.leases).isEmpty();
      assertThat(loop.pendingTasks()).isZero();
    }

    @Test
    void aZeroDrainRevokesAtOnceWithoutPublishingDraining() {
      use(CONFIG.toBuilder().drain(Duration.ZERO).build(), RegistrarControls.PRODUCTION);
      register();
      driver.close();

      assertThat(etcd.journal).containsExactly("0ms grant", "0ms putIfAbsent 1", "0ms revoke 1");
      assertThat(last(DRAINING).detail()).isEqualTo("drain 0 ms; DRAINING not published");
      assertThat(types()).containsExactly(REGISTERED, DRAINING, REVOKED);
      assertThat(driver.closed()).isCompleted();
    }

    @Test
    void aSecondCloseIsANoOp() {
      register();
      driver.close();
      int mark = etcd.journal.size();
      driver.close();
      assertThat(etcd.journalSince(mark)).isEmpty();
      loop.advance(ms(2000));
      driver.close();
      assertThat(types().stream().filter(t -> t == REVOKED)).hasSize(1);
    }

    @Test
    void aRevokeThatCannotReachEtcdIsRetriedAndSucceedsWhenEtcdIsBack() {
      use(CONFIG.toBuilder().drain(Duration.ZERO).build(), RegistrarControls.PRODUCTION);
      register();
      etcd.down = true;
      driver.close();
      assertThat(driver.closed()).isNotDone();
      advanceExactly(ms(100));
      etcd.down = false;
      advanceExactly(ms(200));

      assertThat(last(REVOKED).detail()).isEqualTo("after 2 failed attempt(s)");
      assertThat(etcd.journal).containsSubsequence("0ms revoke 1", "0ms connectionFailed", "100ms revoke 1", "100ms connectionFailed", "300ms revoke 1");
      assertThat(driver.closed()).isCompleted();
      assertThat(types()).doesNotContain(FAILED);
    }

    @Test
    void aRevokeStillUnreachableAfterTwoRequestTimeoutsIsReportedFailedAndTheKeyLeftToExpire() {
      use(CONFIG.toBuilder().drain(Duration.ZERO).build(), RegistrarControls.PRODUCTION);
      register();
      etcd.down = true;
      driver.close();
      loop.advance(ms(1999)); // attempts at 0, 100, 300, 700, 1500 ms; the next (2500 ms) is past 2 s
      assertThat(driver.closed()).isNotDone();
      loop.advance(ms(1000));

      assertThat(driver.closed()).isCompleted();
      assertThat(etcd.journal.stream().filter(c -> c.contains("revoke")))
          .containsExactly("0ms revoke 1", "100ms revoke 1", "300ms revoke 1", "700ms revoke 1", "1500ms revoke 1",
              "2500ms revoke 1");
      assertThat(last(FAILED).detail()).startsWith("could not revoke the lease (could not revoke 1: etcd"
          + " unreachable); the key expires with it within 3s");
      assertThat(driver.leftBehind()).hasValue("could not revoke 1: etcd unreachable");
      assertThat(driver.state()).isEqualTo(RegistrationState.CLOSED);
    }

    @Test
    void aRefusedRevokeIsNotRetried() {
      use(CONFIG.toBuilder().drain(Duration.ZERO).build(), RegistrarControls.PRODUCTION);
      register();
      etcd.refusing = true;
      driver.close();

      assertThat(driver.closed()).isCompleted();
      assertThat(types()).containsExactly(REGISTERED, DRAINING, FAILED);
    }
  }

  /** A close in each state ends in CLOSED with nothing left pending, and never leaves a live lease behind. */
  @Nested
  class CloseInEveryState {
    @Test
    void duringAStartThatSucceedsTheRegistrationIsDrainedAndRevokedOnceItIsWritten() {
      etcd.down = true;
      driver.start();
      driver.close();
      assertThat(driver.closed()).isNotDone();
      etcd.down = false;
      loop.advance(ms(100));

      assertThat(driver.started()).isCompleted();
      assertThat(types()).containsExactly(REGISTERED, DRAINING);
      loop.advance(ms(2000));
      assertThat(types()).containsExactly(REGISTERED, DRAINING, REVOKED);
      assertThat(driver.closed()).isCompleted();
      assertThat(etcd.leases).isEmpty();
      assertThat(loop.pendingTasks()).isZero();
    }

    @Test
    void duringAStartThatFailsTheDriverSimplyEnds() {
      etcd.down = true;
      driver.start();
      driver.close();
      loop.advance(Duration.ofSeconds(6));

      assertThat(failure(driver.started())).isInstanceOf(RegistryUnavailableException.class);
      assertThat(driver.closed()).isCompleted();
      assertThat(events).isEmpty();
      assertThat(loop.pendingTasks()).isZero();
    }

    @Test
    void whileUnreachableTheDrainingPutFailsButTheRevokeStillRunsWhenEtcdIsBack() {
      register();
      etcd.down = true;
      loop.advance(ms(1000));
      assertThat(driver.state()).isEqualTo(RegistrationState.UNREACHABLE);
      driver.close();
      assertThat(last(DRAINING).detail()).isEqualTo("drain 2000 ms; could not publish DRAINING: could not put 1"
          + " DRAINING: etcd unreachable");
      etcd.down = false;
      loop.advance(ms(2000));

      assertThat(types()).containsExactly(REGISTERED, UNREACHABLE, DRAINING, REVOKED);
      assertThat(driver.closed()).isCompleted();
      assertThat(loop.pendingTasks()).isZero();
    }

    @Test
    void whileTheLeaseIsLostNoDrainingIsWrittenAndTheRevokeFindsTheLeaseEnded() {
      use(CONFIG, RegistrarControls.PRODUCTION.withReregister(false));
      register();
      etcd.expire(1);
      loop.advance(ms(1000));
      assertThat(driver.state()).isEqualTo(RegistrationState.LEASE_LOST);
      int mark = etcd.journal.size();
      driver.close();
      loop.advance(ms(2000));

      assertThat(etcd.journalSince(mark)).doesNotContain("1000ms put 1 DRAINING").contains("3000ms revoke 1");
      assertThat(last(REVOKED).detail()).isEqualTo("the lease had already ended");
      assertThat(driver.closed()).isCompleted();
      assertThat(loop.pendingTasks()).isZero();
    }

    @Test
    void whileDrainingALeaseThatEndsIsNotReplaced() {
      register();
      driver.close();
      etcd.expire(1);
      loop.advance(ms(2000));

      assertThat(types()).containsExactly(REGISTERED, DRAINING, REVOKED).doesNotContain(LEASE_LOST);
      assertThat(etcd.journal.stream().filter(c -> c.contains("grant"))).hasSize(1);
      assertThat(driver.closed()).isCompleted();
    }

    @Test
    void afterFailedTheLeaseIsRevokedIfPossibleAndFailedIsNotReportedTwice() {
      use(CONFIG.toBuilder().maxFailures(1).build(), RegistrarControls.PRODUCTION);
      register();
      etcd.down = true;
      loop.advance(ms(1000));
      assertThat(driver.state()).isEqualTo(RegistrationState.FAILED);
      driver.close();
      loop.advance(ms(3000));

      assertThat(types()).containsExactly(REGISTERED, UNREACHABLE, FAILED);
      assertThat(driver.state()).isEqualTo(RegistrationState.CLOSED);
      assertThat(driver.leftBehind()).as("FAILED was reported already").isEmpty();
      assertThat(driver.closed()).isCompleted();
      assertThat(loop.pendingTasks()).isZero();
    }

    @Test
    void afterClosedAnotherCloseAndAnUpdateChangeNothing() {
      use(CONFIG.toBuilder().drain(Duration.ZERO).build(), RegistrarControls.PRODUCTION);
      register();
      driver.close();
      int mark = etcd.journal.size();
      driver.close();
      CompletableFuture<Instance> result = new CompletableFuture<>();
      driver.update(i -> i.weight(3), result);

      assertThat(failure(result)).isInstanceOf(IllegalStateException.class).hasMessageContaining("CLOSED");
      assertThat(etcd.journalSince(mark)).isEmpty();
    }

    @Test
    void whileDrainingAnUpdateIsRefused() {
      register();
      driver.close();
      CompletableFuture<Instance> result = new CompletableFuture<>();
      driver.update(i -> i.weight(3), result);

      assertThat(failure(result)).isInstanceOf(IllegalStateException.class).hasMessageContaining("DRAINING");
    }
  }

  /**
   * {@code drain()} then {@code close()}: the graceful stop with the application's work between the two. The drain
   * is a timer on the fake clock, checked to end exactly when due; the close after it revokes at once.
   */
  /** Issue 35: with a signing key, a live registration's value is put again (signed afresh) before it expires. */
  @Nested
  class SigningAgain {
    /** TTL 3 s, keepalive 1 s, signatures good for 60 s: signed again at the first keepalive 30 s after a put. */
    private final RegistrarConfig signing = CONFIG.toBuilder().signingKey(dev.muster.sign.SigningKey.generate())
        .signatureValidity(Duration.ofSeconds(60)).build();

    @Test
    void theValueIsPutAgainAtTheFirstKeepaliveHalfTheValidityAfterTheLastPut() {
      use(signing, RegistrarControls.PRODUCTION);
      register();
      loop.advance(Duration.ofMillis(29_500));
      assertThat(etcd.journal).filteredOn(c -> c.contains(" put ")).as("not yet").isEmpty();

      loop.advance(Duration.ofMillis(1000)); // the keepalive at 30 s
      assertThat(etcd.journal).filteredOn(c -> c.contains(" put ")).containsExactly("30000ms put 1 UP");
      assertThat(types()).as("not an update: no event").containsExactly(REGISTERED);

      loop.advance(Duration.ofSeconds(29));
      assertThat(etcd.journal).filteredOn(c -> c.contains(" put ")).hasSize(1);
      loop.advance(Duration.ofSeconds(1));
      assertThat(etcd.journal).filteredOn(c -> c.contains(" put ")).hasSize(2);
    }

    @Test
    void anUpdateCountsAsASignatureAndADrainedRegistrationIsSignedAgainToo() {
      use(signing, RegistrarControls.PRODUCTION);
      register();
      loop.advance(Duration.ofSeconds(20));
      driver.update(i -> i.weight(50), new CompletableFuture<>());
      loop.advance(Duration.ofSeconds(20)); // 40 s: 20 s since the update's put
      assertThat(etcd.journal).filteredOn(c -> c.contains(" put ")).containsExactly("20000ms put 1 UP");

      driver.drain();
      loop.advance(Duration.ofSeconds(31)); // DRAINED, the lease kept alive: DRAINING is signed again
      assertThat(etcd.journal).filteredOn(c -> c.contains(" put ")).last().asString().endsWith("put 1 DRAINING");
      assertThat(etcd.journal).filteredOn(c -> c.contains(" put ")).hasSize(3);
    }

    @Test
    void withoutASigningKeyNothingIsPutAgain() {
      register();
      loop.advance(Duration.ofMinutes(30));
      assertThat(etcd.journal).filteredOn(c -> c.contains(" put ")).isEmpty();
    }
  }

  @Nested
  class DrainThenClose {
    @Test
    void drainPublishesDrainingKeepsTheLeaseAliveAndEndsDrainedWithTheKeyStillThere() {
      register();
      loop.advance(ms(400));
      driver.drain();
      assertThat(driver.state()).isEqualTo(RegistrationState.DRAINING);
      assertThat(etcd.journal).last().isEqualTo("400ms put 1 DRAINING");
      assertThat(driver.drained()).isNotDone();

      advanceExactly(ms(1000));
      assertThat(etcd.journal).last().isEqualTo("1400ms keepAlive 1");
      assertThat(driver.drained()).isNotDone();
      advanceExactly(ms(1000));

      assertThat(driver.drained()).isCompleted();
      assertThat(driver.state()).isEqualTo(RegistrationState.DRAINED);
      assertThat(types()).containsExactly(REGISTERED, DRAINING, DRAINED);
      assertThat(last(DRAINED).detail()).isEqualTo("drain 2000 ms ended; the lease is kept alive until close()");
      assertThat(etcd.journal).doesNotContain("2400ms revoke 1");
      assertThat(etcd.holder).as("the key stays, DRAINING, under its lease").isEqualTo(1);
      assertThat(etcd.value.state()).isEqualTo(InstanceState.DRAINING);
      assertThat(driver.closed()).isNotDone();

      advanceExactly(ms(1000)); // the lease is still kept alive, once an interval
      assertThat(etcd.journal).last().isEqualTo("3400ms keepAlive 1");
      loop.advance(ms(100));
      driver.close();

      assertThat(etcd.journal).last().isEqualTo("3500ms revoke 1");
      assertThat(types()).containsExactly(REGISTERED, DRAINING, DRAINED, REVOKED);
      assertThat(driver.state()).isEqualTo(RegistrationState.CLOSED);
      assertThat(driver.closed()).isCompleted();
      assertThat(etcd.leases).isEmpty();
      assertThat(loop.pendingTasks()).isZero();
    }

    @Test
    void aCloseDuringTheDrainRevokesAtItsEndAndReportsNoDrained() {
      register();
      driver.drain();
      loop.advance(ms(500));
      driver.close();
      assertThat(driver.closed()).isNotDone();
      assertThat(etcd.journal).last().isEqualTo("0ms put 1 DRAINING");

      loop.advance(ms(1500).minus(NANO));
      assertThat(etcd.journal).noneMatch(c -> c.contains("revoke"));
      assertThat(driver.drained()).isNotDone();
      loop.advance(NANO);

      assertThat(etcd.journal).contains("2000ms revoke 1");
      assertThat(types()).containsExactly(REGISTERED, DRAINING, REVOKED);
      assertThat(driver.drained()).isCompleted();
      assertThat(driver.closed()).isCompleted();
      assertThat(loop.pendingTasks()).isZero();
    }

    @Test
    void aDrainAfterACloseBeganChangesNothingAndCompletesWhenThatDrainEnds() {
      register();
      driver.close();
      int mark = etcd.journal.size();
      driver.drain();
      assertThat(etcd.journalSince(mark)).isEmpty();
      assertThat(driver.drained()).isNotDone();

      loop.advance(ms(2000).minus(NANO));
      assertThat(driver.drained()).isNotDone();
      loop.advance(NANO);

      assertThat(driver.drained()).isCompleted();
      assertThat(driver.closed()).isCompleted();
      assertThat(types()).containsExactly(REGISTERED, DRAINING, REVOKED);
    }

    @Test
    void aSecondDrainIsANoOp() {
      register();
      driver.drain();
      int mark = etcd.journal.size();
      driver.drain();
      loop.advance(ms(2000));
      driver.drain();

      assertThat(etcd.journalSince(mark)).doesNotContain("0ms put 1 DRAINING").noneMatch(c -> c.contains("revoke"));
      assertThat(types()).containsExactly(REGISTERED, DRAINING, DRAINED);
    }

    @Test
    void aLeaseLostWhileDrainedIsNotReplacedAndTheCloseFindsItEnded() {
      register();
      driver.drain();
      loop.advance(ms(2000));
      etcd.expire(1);
      loop.advance(ms(3000));

      assertThat(driver.state()).isEqualTo(RegistrationState.DRAINED);
      assertThat(types()).containsExactly(REGISTERED, DRAINING, DRAINED).doesNotContain(LEASE_LOST);
      assertThat(etcd.journal.stream().filter(c -> c.contains("grant") || c.contains("putIfAbsent")))
          .as("no re-registration of a draining instance").hasSize(2);
      driver.close();

      assertThat(last(REVOKED).detail()).isEqualTo("the lease had already ended");
      assertThat(driver.closed()).isCompleted();
      assertThat(loop.pendingTasks()).isZero();
    }

    @Test
    void aZeroDrainPublishesNothingCompletesAtOnceAndTheCloseRevokes() {
      use(CONFIG.toBuilder().drain(Duration.ZERO).build(), RegistrarControls.PRODUCTION);
      register();
      driver.drain();

      assertThat(driver.drained()).isCompleted();
      assertThat(driver.state()).isEqualTo(RegistrationState.DRAINED);
      assertThat(etcd.journal).containsExactly("0ms grant", "0ms putIfAbsent 1");
      assertThat(etcd.value.state()).isEqualTo(InstanceState.UP);
      driver.close();

      assertThat(etcd.journal).containsExactly("0ms grant", "0ms putIfAbsent 1", "0ms revoke 1");
      assertThat(types()).containsExactly(REGISTERED, DRAINING, DRAINED, REVOKED);
      assertThat(driver.closed()).isCompleted();
    }

    @Test
    void aDrainAskedDuringTheStartRunsOnceTheRegistrationIsWritten() {
      etcd.down = true;
      driver.start();
      driver.drain();
      etcd.down = false;
      loop.advance(ms(100));

      assertThat(types()).containsExactly(REGISTERED, DRAINING);
      assertThat(etcd.value.state()).isEqualTo(InstanceState.DRAINING);
      loop.advance(ms(2000));
      assertThat(types()).containsExactly(REGISTERED, DRAINING, DRAINED);
      assertThat(driver.drained()).isCompleted();
      assertThat(driver.closed()).isNotDone();
    }

    @Test
    void onAFailedRegistrationTheDrainCompletesAtOnceAndTheCloseStillRevokes() {
      use(CONFIG.toBuilder().maxFailures(1).build(), RegistrarControls.PRODUCTION);
      register();
      etcd.down = true;
      loop.advance(ms(1000));
      assertThat(driver.state()).isEqualTo(RegistrationState.FAILED);
      int mark = etcd.journal.size();
      driver.drain();

      assertThat(driver.drained()).isCompleted();
      assertThat(etcd.journalSince(mark)).isEmpty();
      etcd.down = false;
      driver.close();
      assertThat(etcd.journalSince(mark)).containsExactly("1000ms revoke 1");
      assertThat(driver.closed()).isCompleted();
    }

    @Test
    void whileDrainedAnUpdateIsRefused() {
      register();
      driver.drain();
      loop.advance(ms(2000));
      CompletableFuture<Instance> result = new CompletableFuture<>();
      driver.update(i -> i.weight(3), result);

      assertThat(failure(result)).isInstanceOf(IllegalStateException.class).hasMessageContaining("DRAINED");
    }
  }
}
