package dev.muster.cache.internal;

import static dev.muster.cache.Endpoints.delete;
import static dev.muster.cache.Endpoints.ids;
import static dev.muster.cache.Endpoints.instance;
import static dev.muster.cache.Endpoints.key;
import static dev.muster.cache.Endpoints.put;
import static dev.muster.cache.internal.CacheDriver.StreamError.COMPACTED;
import static dev.muster.cache.internal.CacheDriver.StreamError.OTHER;
import static dev.muster.cache.internal.CacheDriver.StreamError.UNAVAILABLE;
import static dev.muster.cache.internal.DriverHarness.config;
import static dev.muster.cache.internal.DriverHarness.header;
import static org.assertj.core.api.Assertions.assertThat;

import dev.muster.cache.CacheConfig;
import dev.muster.cache.EndpointDelta;
import dev.muster.cache.EndpointSet;
import dev.muster.cache.Endpoints;
import dev.muster.cache.internal.CacheDriver.Header;
import dev.muster.cache.internal.CacheDriver.State;
import dev.muster.cache.internal.RecordingPublisher.Published;
import dev.muster.registry.Instance;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import org.junit.jupiter.api.Nested;
import org.junit.jupiter.api.Test;

/**
 * The cache state machine against a scripted registry on a fake clock: every transition of SPEC §4. A file this
 * long keeps every scenario of one state machine next to the others; the fakes live in their own files.
 */
class CacheDriverTest {
  private static final Duration NANO = Duration.ofNanos(1);

  private DriverHarness h = new DriverHarness(config().build());

  private void use(CacheConfig config) {
    h = new DriverHarness(config);
  }

  /** {a, b} at revision 10, watch 1 from 10 acknowledged. */
  private void startWatchingAt10() {
    h.io.willRange(10, put("a", 5), put("b", 7));
    h.driver.start();
    h.driver.onCreated(h.stream(), header(10));
  }

  /** Advances exactly {@code delay}, checking that nothing happens a nanosecond before it ends. */
  private void advanceExactly(Duration delay) {
    int mark = h.mark();
    if (!delay.isZero()) {
      h.timer.advance(delay.minus(NANO));
      assertThat(h.journalSince(mark)).as("nothing before %s", delay).isEmpty();
      h.timer.advance(NANO);
    } else {
      h.timer.advance(Duration.ZERO);
    }
  }

  private static Duration ms(long millis) {
    return Duration.ofMillis(millis);
  }

  @Nested
  class Starting {
    @Test
    void rangesPublishesTheSnapshotAndWatchesFromTheRangeRevisionItself() {
      h.io.willRange(10, put("a", 5), put("b", 7));

      h.driver.start();

      assertThat(h.journal).containsExactly("range", "publish SNAPSHOT at 10 [a, b]", "watch 1 from 10");
      assertThat(h.publisher.last().delta().added()).containsExactlyInAnyOrder(instance("a"), instance("b"));
      assertThat(h.driver.state()).isEqualTo(State.WATCHING);
      assertThat(h.driver.isStale()).isFalse();
      assertThat(h.driver.resyncCount()).isZero();
    }

    @Test
    void theEventsOfOneRevisionArePublishedAsOneUpdate() {
      startWatchingAt10();

      h.driver.onEvents(h.stream(), header(11), List.of(delete("a", 11), put("c", 11)));

      Published p = h.publisher.last();
      assertThat(p.delta().kind()).isEqualTo(EndpointDelta.Kind.UPDATE);
      assertThat(p.set().revision()).isEqualTo(11);
      assertThat(ids(p.set())).containsExactly("b", "c");
      assertThat(p.delta().added()).containsExactly(instance("c"));
      assertThat(p.delta().removed()).containsExactly(instance("a"));
      assertThat(h.applier.revision()).isEqualTo(11);
    }

    @Test
    void severalRevisionsInOneResponseAreAppliedInOrderEachAsItsOwnPublication() {
      startWatchingAt10();
      int mark = h.mark();

      h.driver.onEvents(h.stream(), header(14),
          List.of(put("c", 11), delete("a", 12), put("d", 12), delete("c", 14)));

      assertThat(h.journalSince(mark)).containsExactly(
          "publish UPDATE at 11 [a, b, c]",
          "publish UPDATE at 12 [b, c, d]",
          "publish UPDATE at 14 [b, d]");
    }

    @Test
    void eventsAtOrBelowTheCheckpointAreIgnoredAsDuplicates() {
      startWatchingAt10();
      h.driver.onEvents(h.stream(), header(11), List.of(put("c", 11)));
      int mark = h.mark();

      h.driver.onEvents(h.stream(), header(11), List.of(delete("a", 10), put("c", 11)));

      assertThat(h.journalSince(mark)).isEmpty();
      assertThat(h.applier.revision()).isEqualTo(11);
    }
  }

  /**
   * etcd 18089 / 19179: a watch that starts exactly at the compaction revision C does not get the DELETEs at C. No
   * watch may start at a revision whose events the cache still needs: every watch starts at the checkpoint.
   */
  @Nested
  class ResumeRule {
    @Test
    void theFirstWatchStartsAtTheRangeRevisionSoACompactionJustAfterTheRangeForcesAResync() {
      h.io.willRange(10, put("a", 5), put("b", 7));
      h.driver.start();
      assertThat(h.io.lastFrom()).isEqualTo(10);
      // b is deleted at 11 and etcd compacts at 11 before the watch is created: a watch from 11 would be accepted
      // and miss the delete; the watch from 10 is below the compaction and is told so.
      h.io.willRange(11, put("a", 5));

      h.driver.onError(h.stream(), COMPACTED, 11, "required revision has been compacted");

      assertThat(ids(h.publisher.last().set())).containsExactly("a");
      assertThat(h.publisher.last().delta().kind()).isEqualTo(EndpointDelta.Kind.RESYNC);
      assertThat(h.io.lastFrom()).isEqualTo(11);
    }

    @Test
    void aBrokenWatchResumesAtTheCheckpointNotAfterIt() {
      startWatchingAt10();
      h.driver.onEvents(h.stream(), header(24), List.of(put("c", 24)));
      h.driver.onError(h.stream(), UNAVAILABLE, 0, "connection reset");

      h.timer.advance(h.twin.ceiling(0));

      assertThat(h.io.lastFrom()).isEqualTo(24);
    }

    @Test
    void aReplayOfTheCheckpointRevisionWholeOrInPartChangesNothing() {
      startWatchingAt10();
      h.driver.onEvents(h.stream(), header(24), List.of(delete("a", 24), put("c", 24)));
      h.driver.onError(h.stream(), UNAVAILABLE, 0, "connection reset");
      h.timer.advance(h.twin.ceiling(0));
      int published = h.publisher.published.size();

      // etcd compacted at 24 and replays revision 24 without its tombstone (18089): only the put comes back.
      h.driver.onEvents(h.stream(), header(24), List.of(put("c", 24)));

      assertThat(h.publisher.published).hasSize(published);
      assertThat(ids(h.publisher.last().set())).containsExactly("b", "c");
      assertThat(h.applier.revision()).isEqualTo(24);
    }

    @Test
    void aResyncWatchesFromTheResyncRevisionItself() {
      startWatchingAt10();
      h.io.willRange(40, put("a", 5));

      h.driver.onError(h.stream(), COMPACTED, 30, "compacted");

      assertThat(h.io.lastFrom()).isEqualTo(40);
    }

    @Test
    void aStalledWatchResumesAtTheCheckpoint() {
      startWatchingAt10();
      h.driver.onEvents(h.stream(), header(17), List.of(put("c", 17)));
      h.timer.advance(h.config.progressInterval().plus(h.config.progressTimeout()));
      assertThat(h.driver.state()).isEqualTo(State.BROKEN);

      h.timer.advance(h.twin.ceiling(0));

      assertThat(h.io.lastFrom()).isEqualTo(17);
    }
  }

  /**
   * The connection is shared with every other cache and registration of the registry: it is replaced only when the
   * connection itself failed, never because etcd refused one watch or one range.
   */
  @Nested
  class SharedConnection {
    @Test
    void aWatchEtcdKeepsCancellingNeverReplacesTheConnection() {
      startWatchingAt10();
      for (int attempt = 0; attempt < 6; attempt++) {
        h.io.willRange(10 + attempt, put("a", 5), put("b", 7));
        h.driver.onError(h.stream(), CacheDriver.StreamError.OTHER, 0, "etcdserver: permission denied");
        h.timer.advance(h.twin.ceiling(attempt));
        assertThat(h.driver.state()).as("attempt %d", attempt).isEqualTo(State.WATCHING);
      }

      assertThat(h.io.resets()).isZero();
      assertThat(h.journal).doesNotContain("connectionFailed");
    }

    @Test
    void aRangeEtcdKeepsRefusingNeverReplacesTheConnection() {
      for (int attempt = 0; attempt < 5; attempt++) {
        h.io.willRefuseRange("etcdserver: permission denied");
      }
      h.io.willRange(10, put("a", 5));
      h.driver.start();
      for (int attempt = 0; attempt < 5; attempt++) {
        h.timer.advance(h.twin.ceiling(attempt));
      }

      assertThat(h.driver.state()).isEqualTo(State.WATCHING);
      assertThat(ids(h.publisher.last().set())).containsExactly("a");
      assertThat(h.io.resets()).isZero();
    }

    @Test
    void aRangeDeniedForGoodStopsTheCacheWithoutRetryingOrTouchingTheConnection() {
      var denied = new dev.muster.AccessDeniedException(dev.muster.ErrorCode.PERMISSION_DENIED,
          "etcd user \"c\" may not watch /muster/default/orders/", null);
      h.io.willDenyRange(denied);
      h.driver.start();
      h.timer.advance(Duration.ofMinutes(10));

      assertThat(h.driver.state()).isEqualTo(State.FAILED);
      assertThat(h.driver.failure()).containsSame(denied);
      assertThat(h.publisher.failed).containsExactly(denied);
      assertThat(h.publisher.stale).as("the failure is the one report").isEmpty();
      assertThat(h.driver.isStale()).isTrue();
      assertThat(h.journal.stream().filter("range"::equals)).as("one range, no retry").hasSize(1);
      assertThat(h.io.resets()).isZero();
    }

    @Test
    void aWatchCancelledAndThenDeniedStopsAfterItsResyncKeepingTheLastSet() {
      startWatchingAt10();
      h.io.willDenyRange(new dev.muster.AccessDeniedException(dev.muster.ErrorCode.PERMISSION_DENIED, "revoked",
          null));
      h.driver.onError(h.stream(), CacheDriver.StreamError.OTHER, 0, "etcdserver: permission denied");
      h.timer.advance(Duration.ofMinutes(10));

      assertThat(h.driver.state()).isEqualTo(State.FAILED);
      assertThat(ids(h.publisher.last().set())).as("the last set stays").isNotEmpty();
      assertThat(h.io.resets()).isZero();
    }

    @Test
    void eachRangeThatCannotReachEtcdIsReportedAgainstTheConnection() {
      h.io.willFailRange("connection refused").willFailRange("connection refused").willFailRange("refused");
      h.io.willRange(10, put("a", 5));
      h.driver.start();
      assertThat(h.io.resets()).isEqualTo(1);
      advanceExactly(h.twin.delay(0));
      assertThat(h.io.resets()).isEqualTo(2);

      advanceExactly(h.twin.delay(1));
      assertThat(h.io.resets()).isEqualTo(3);
      advanceExactly(h.twin.delay(2));

      assertThat(h.io.resets()).as("the range that succeeded reports nothing").isEqualTo(3);
      assertThat(h.driver.state()).isEqualTo(State.WATCHING);
    }

    /** etcd answered "no leader" (requireLeader, an election): resumed like an outage, never reported. */
    @Test
    void noLeaderResumesAtTheCheckpointWithoutReportingTheConnection() {
      startWatchingAt10();
      h.driver.onError(h.stream(), CacheDriver.StreamError.NO_LEADER, 0, "etcdserver: no leader");
      assertThat(h.driver.state()).isEqualTo(State.BROKEN);
      h.timer.advance(h.twin.ceiling(0));

      assertThat(h.io.resets()).isZero();
      assertThat(h.io.lastFrom()).as("resumed at the checkpoint, no range").isEqualTo(10);
      assertThat(h.journal.stream().filter("range"::equals)).hasSize(1);
    }

    @Test
    void aRefusalAfterAnOutageIsNotReportedAgainstTheConnection() {
      startWatchingAt10();
      h.driver.onError(h.stream(), UNAVAILABLE, 0, "connection refused");
      h.timer.advance(h.twin.ceiling(0));
      h.io.willRange(12, put("a", 5));
      h.driver.onError(h.stream(), CacheDriver.StreamError.OTHER, 0, "etcdserver: permission denied");

      h.timer.advance(h.twin.ceiling(1));

      assertThat(h.io.resets()).as("the outage is reported, the refusal is not").isEqualTo(1);
      assertThat(h.io.lastFrom()).isEqualTo(12);
    }
  }

  @Nested
  class ProgressNotifications {
    /** etcd issue 15220: a progress revision can be ahead of events not yet delivered. */
    @Test
    void neverAdvanceTheCheckpointSoABreakResumesFromTheLastAppliedRevision() {
      startWatchingAt10();
      h.driver.onEvents(h.stream(), header(12), List.of(put("c", 12)));

      h.driver.onProgress(h.stream(), header(1_000));

      assertThat(h.applier.revision()).isEqualTo(12);
      assertThat(h.publisher.last().set().revision()).isEqualTo(12);

      h.driver.onError(h.stream(), UNAVAILABLE, 0, "connection reset");
      h.timer.advance(h.twin.ceiling(0));

      assertThat(h.io.lastFrom()).isEqualTo(12);
    }
  }

  @Nested
  class BreakingAndResuming {
    @Test
    void anUnavailableStreamMarksTheCacheStaleOnceAndKeepsTheSet() {
      startWatchingAt10();
      EndpointSet before = h.publisher.last().set();
      int published = h.publisher.published.size();
      Instant brokeAt = h.timer.now();

      h.driver.onError(h.stream(), UNAVAILABLE, 0, "etcd unavailable");

      assertThat(h.driver.state()).isEqualTo(State.BROKEN);
      assertThat(h.driver.isStale()).isTrue();
      assertThat(h.driver.staleSince()).contains(brokeAt);
      assertThat(h.publisher.stale).singleElement().satisfies(s -> {
        assertThat(s.reason()).contains("etcd unavailable");
        assertThat(s.set()).isSameAs(before);
        assertThat(s.since()).isEqualTo(brokeAt);
      });
      assertThat(h.publisher.published).hasSize(published);
      assertThat(h.journal).contains("cancel 1");
    }

    @Test
    void afterTheBackoffDelayTheWatchResumesAtTheCheckpointOnANewStream() {
      startWatchingAt10();
      h.driver.onEvents(h.stream(), header(11), List.of(put("c", 11)));
      Duration delay = h.twin.delay(0);
      h.driver.onError(h.stream(), UNAVAILABLE, 0, "etcd unavailable");
      int mark = h.mark();

      advanceExactly(delay);

      assertThat(h.journalSince(mark)).containsExactly("watch 2 from 11");
      assertThat(h.stream()).isEqualTo(2);
    }

    @Test
    void aSecondErrorWhileStillBrokenDoesNotReportStaleAgain() {
      startWatchingAt10();
      h.driver.onError(h.stream(), UNAVAILABLE, 0, "etcd unavailable");
      h.timer.advance(h.twin.ceiling(0));

      h.driver.onError(h.stream(), UNAVAILABLE, 0, "still unavailable");

      assertThat(h.publisher.stale).hasSize(1);
    }

    /** jetcd resumes a broken stream on its own; whatever it delivers there must never reach the applier. */
    @Test
    void responsesOnTheOldStreamAreIgnored() {
      startWatchingAt10();
      h.driver.onError(1, UNAVAILABLE, 0, "etcd unavailable");
      h.timer.advance(h.twin.ceiling(0));
      assertThat(h.stream()).isEqualTo(2);
      int mark = h.mark();

      h.driver.onCreated(1, header(15));
      h.driver.onEvents(1, header(15), List.of(put("x", 13), delete("a", 15)));
      h.driver.onProgress(1, header(15));
      h.driver.onError(1, COMPACTED, 14, "old stream compacted");
      h.driver.onClosed(1);

      assertThat(h.journalSince(mark)).isEmpty();
      assertThat(h.applier.revision()).isEqualTo(10);
      assertThat(h.driver.isStale()).isTrue();
      assertThat(h.driver.state()).isEqualTo(State.WATCHING);
    }

    @Test
    void theCreationOfTheNewStreamEndsTheStaleness() {
      startWatchingAt10();
      h.driver.onError(h.stream(), UNAVAILABLE, 0, "etcd unavailable");
      h.timer.advance(ms(100));
      h.timer.advance(ms(400));

      h.driver.onCreated(h.stream(), header(10));

      assertThat(h.driver.isStale()).isFalse();
      assertThat(h.driver.staleSince()).isEmpty();
      assertThat(h.publisher.recovered).singleElement()
          .satisfies(r -> assertThat(r.staleFor()).isEqualTo(ms(500)));
    }

    @Test
    void eventsOnTheNewStreamApplyFromTheCheckpoint() {
      startWatchingAt10();
      h.driver.onError(h.stream(), UNAVAILABLE, 0, "etcd unavailable");
      h.timer.advance(h.twin.ceiling(0));
      h.driver.onCreated(h.stream(), header(12));

      h.driver.onEvents(h.stream(), header(12), List.of(delete("a", 11), put("c", 12)));

      assertThat(ids(h.publisher.last().set())).containsExactly("b", "c");
    }

    @Test
    void aStreamThatEndsWithoutAnErrorIsABreakToo() {
      startWatchingAt10();

      h.driver.onClosed(h.stream());

      assertThat(h.driver.state()).isEqualTo(State.BROKEN);
      assertThat(h.driver.isStale()).isTrue();
      h.timer.advance(h.twin.ceiling(0));
      assertThat(h.io.lastFrom()).isEqualTo(10);
    }
  }

  @Nested
  class Resyncing {
    @Test
    void aRangeWhoseLaterPageHoldsARecordOutsideThePrefixIsDroppedWholeAndRangedAgainAfterTheBackoff() {
      h.io.willRange(20, put("c", 15), put(Instance.of("billing", "10.0.0.9", 9000).id("e"), 16));
      h.io.willRange(21, put("c", 15));

      h.driver.start();
      assertThat(h.journal).as("the first page was not published").containsExactly("range", "stale");

      h.timer.advance(h.twin.ceiling(0));
      assertThat(h.journal).containsExactly("range", "stale", "range", "publish SNAPSHOT at 21 [c]", "watch 1 from 21");
    }

    @Test
    void aWatchCancelledByEtcdForAnotherReasonIsStaleUntilAFullRangeReplacesTheSetAfterTheBackoff() {
      startWatchingAt10();
      h.io.willRange(20, put("a", 5), put("d", 15));
      Duration delay = h.twin.delay(0);
      int mark = h.mark();

      h.driver.onError(h.stream(), CacheDriver.StreamError.OTHER, 0, "etcdserver: permission denied");
      assertThat(h.driver.isStale()).isTrue();
      h.timer.advance(delay);

      assertThat(h.journalSince(mark))
          .containsExactly("cancel 1", "stale", "range", "publish RESYNC at 20 [a, d]", "watch 2 from 20");
      assertThat(h.driver.resyncCount()).isEqualTo(1);
    }

    @Test
    void aCompactedWatchRangesAgainAndReplacesTheSet() {
      startWatchingAt10();
      // During the break b was deleted (30) and c registered (40); history up to 50 is compacted.
      h.io.willRange(60, put("a", 5), put("c", 40));
      int mark = h.mark();

      h.driver.onError(h.stream(), COMPACTED, 50, "required revision has been compacted");

      assertThat(h.journalSince(mark))
          .containsExactly("cancel 1", "range", "publish RESYNC at 60 [a, c]", "watch 2 from 60");
      Published p = h.publisher.last();
      assertThat(p.delta().removed()).containsExactly(instance("b"));
      assertThat(p.delta().added()).containsExactly(instance("c"));
      assertThat(h.driver.resyncCount()).isEqualTo(1);
      assertThat(h.publisher.stale).isEmpty();
    }

    @Test
    void aChangedClusterIdResyncsAndTheNewClusterIsTrustedAfterwards() {
      startWatchingAt10();
      long otherCluster = 0xD2D2;
      h.io.willRange(otherCluster, 3, put("z", 3));
      int mark = h.mark();

      h.driver.onEvents(h.stream(), new Header(otherCluster, 3), List.of(put("y", 3)));

      assertThat(h.journalSince(mark))
          .containsExactly("cancel 1", "range", "publish RESYNC at 3 [z]", "watch 2 from 3");
      assertThat(h.driver.resyncCount()).isEqualTo(1);

      h.driver.onEvents(h.stream(), new Header(otherCluster, 4), List.of(put("y", 4)));

      assertThat(ids(h.publisher.last().set())).containsExactly("y", "z");
      assertThat(h.driver.resyncCount()).isEqualTo(1);
    }

    @Test
    void aHeaderRevisionBelowTheCheckpointResyncs() {
      startWatchingAt10();
      h.io.willRange(6, put("a", 5));
      int mark = h.mark();

      h.driver.onProgress(h.stream(), header(6));

      assertThat(h.journalSince(mark))
          .containsExactly("cancel 1", "range", "publish RESYNC at 6 [a]", "watch 2 from 6");
      assertThat(h.driver.resyncCount()).isEqualTo(1);
    }

    /**
     * Found by {@code muster chaos --members 3} on etcd 3.5.30 (seed 3204, schedule 39): a resync whose range came back
     * at the revision already published published it again, and revisions a listener sees must strictly increase.
     */
    @Test
    void aResyncThatFindsTheRevisionAndSetAlreadyPublishedPublishesNothing() {
      startWatchingAt10();
      h.io.willRange(10, put("a", 5), put("b", 7));
      int mark = h.mark();

      h.driver.onProgress(h.stream(), header(6)); // a lagging member's header: the range shows nothing changed

      assertThat(h.journalSince(mark)).containsExactly("cancel 1", "range", "watch 2 from 10");
      assertThat(h.publisher.last().set().revision()).isEqualTo(10);
      assertThat(h.driver.resyncCount()).isEqualTo(1);
    }

    @Test
    void anUntrustedEventResyncsWithoutPublishingAnyPartOfItsRevision() {
      startWatchingAt10();
      Instance billing = Instance.of("billing", "10.0.0.9", 9000).id("e");
      h.io.willRange(12, put("a", 5), put("b", 7), put("c", 11), put("d", 12));
      int mark = h.mark();

      h.driver.onEvents(h.stream(), header(12),
          List.of(put("c", 11), put("d", 12), Endpoints.put(billing, 12)));

      assertThat(h.journalSince(mark)).containsExactly(
          "publish UPDATE at 11 [a, b, c]", // a whole, trusted revision before the bad one
          "cancel 1", "range", "publish RESYNC at 12 [a, b, c, d]", "watch 2 from 12");
      assertThat(h.publisher.published)
          .noneMatch(p -> p.delta().kind() == EndpointDelta.Kind.UPDATE && p.set().revision() == 12);
    }

    @Test
    void aRangeWithAKeyOutsideThePrefixIsNotInstalledAndIsRetriedLater() {
      startWatchingAt10();
      Instance billing = Instance.of("billing", "10.0.0.9", 9000).id("e");
      h.io.willRange(60, put("a", 5), Endpoints.put(billing, 55));

      h.driver.onError(h.stream(), COMPACTED, 50, "compacted");

      assertThat(h.driver.state()).isEqualTo(State.BROKEN);
      assertThat(h.driver.isStale()).isTrue();
      assertThat(h.applier.revision()).isEqualTo(10);
      assertThat(ids(h.publisher.last().set())).containsExactly("a", "b");
      assertThat(h.driver.resyncCount()).isZero();

      // The retry resumes at 10, is told again that 10 is compacted, and ranges again.
      h.io.willRange(61, put("a", 5));
      h.timer.advance(h.twin.ceiling(0));
      assertThat(h.io.lastFrom()).isEqualTo(10);
      h.driver.onError(h.stream(), COMPACTED, 50, "compacted");

      assertThat(h.publisher.last().delta().kind()).isEqualTo(EndpointDelta.Kind.RESYNC);
      assertThat(ids(h.publisher.last().set())).containsExactly("a");
      assertThat(h.io.lastFrom()).isEqualTo(61);
      assertThat(h.driver.resyncCount()).isEqualTo(1);
    }

    @Test
    void aFailedResyncRangeIsABreakAndIsRetried() {
      startWatchingAt10();
      h.io.willFailRange("no leader");

      h.driver.onError(h.stream(), COMPACTED, 50, "compacted");

      assertThat(h.driver.state()).isEqualTo(State.BROKEN);
      assertThat(h.publisher.stale).singleElement().satisfies(s -> assertThat(s.reason()).contains("no leader"));
      assertThat(ids(h.publisher.last().set())).containsExactly("a", "b");
    }
  }

  @Nested
  class Backoff {
    @Test
    void consecutiveFailuresWaitWithinAWindowThatDoublesUpToTheCap() {
      startWatchingAt10();
      List<Duration> ceilings = new ArrayList<>();
      for (int attempt = 0; attempt < 9; attempt++) {
        Duration ceiling = h.twin.ceiling(attempt);
        Duration delay = h.twin.delay(attempt);
        ceilings.add(ceiling);
        assertThat(delay).isBetween(Duration.ZERO, ceiling);
        int watches = h.io.watches();

        h.driver.onError(h.stream(), UNAVAILABLE, 0, "connection refused");
        advanceExactly(delay);

        assertThat(h.io.watches()).as("retry %d after %s", attempt, delay).isEqualTo(watches + 1);
        assertThat(h.io.lastFrom()).isEqualTo(10);
      }
      assertThat(ceilings).containsExactly(ms(100), ms(200), ms(400), ms(800), ms(1600), ms(3200), ms(5000),
          ms(5000), ms(5000));
    }

    /**
     * Each failure is reported when it happens, not one backoff later at the retry: a report acted on late could
     * close a client on which other caches have resumed meanwhile (docs/design-storms.md, "Why a straggler cannot
     * undo the recovery"). The retry itself reports nothing.
     */
    @Test
    void eachConnectionFailureIsReportedWhenItHappensAndTheRetryReportsNothing() {
      startWatchingAt10();

      for (int attempt = 0; attempt < 3; attempt++) {
        int mark = h.mark();
        h.driver.onError(h.stream(), UNAVAILABLE, 0, "connection refused");
        assertThat(h.journalSince(mark)).as("attempt %d", attempt).startsWith("connectionFailed");
        mark = h.mark();
        h.timer.advance(h.twin.ceiling(attempt));
        assertThat(h.journalSince(mark)).containsExactly("watch " + (attempt + 2) + " from 10");
      }
      assertThat(h.io.resets()).isEqualTo(3);
    }

    /** Fails three times in a row: the next retry would wait up to 800 ms and replace the connection. */
    private void failThreeTimes() {
      startWatchingAt10();
      for (int attempt = 0; attempt < 3; attempt++) {
        h.twin.delay(attempt); // keep the twin in step
        h.driver.onError(h.stream(), UNAVAILABLE, 0, "connection refused");
        h.timer.advance(h.twin.ceiling(attempt));
      }
      h.driver.onCreated(h.stream(), header(10));
    }

    @Test
    void aWatchThatStayedHealthyForHealthyResetStartsTheBackoffAfresh() {
      failThreeTimes();
      h.timer.advance(h.config.healthyReset());
      Duration delay = h.twin.delay(0);

      h.driver.onError(h.stream(), UNAVAILABLE, 0, "connection reset");
      int mark = h.mark();
      advanceExactly(delay);

      assertThat(h.journalSince(mark)).containsExactly("watch 5 from 10");
    }

    /** Opened is not healthy: only a watch etcd acknowledged counts towards healthyReset. */
    @Test
    void aWatchThatWasNeverAcknowledgedDoesNotResetTheBackoffHoweverLongItHung() {
      startWatchingAt10();
      for (int attempt = 0; attempt < 3; attempt++) {
        Duration delay = h.twin.delay(attempt);
        h.driver.onError(h.stream(), UNAVAILABLE, 0, "connection refused");
        advanceExactly(delay);
      }
      // Watch 4 is never created: the stall check gives up on it after progressInterval + progressTimeout, and
      // reports the connection then; the retry does not report it a second time.
      int stalled = h.mark();
      h.timer.advance(h.config.progressInterval().plus(h.config.progressTimeout()));
      assertThat(h.driver.state()).isEqualTo(State.BROKEN);
      assertThat(h.journalSince(stalled)).contains("connectionFailed");
      Duration delay = h.twin.delay(3);
      int mark = h.mark();

      advanceExactly(delay);

      assertThat(h.journalSince(mark)).containsExactly("watch 5 from 10");
    }

    @Test
    void aWatchThatFailsBeforeHealthyResetKeepsGrowingTheBackoff() {
      failThreeTimes();
      h.timer.advance(h.config.healthyReset().minus(ms(1)));
      Duration delay = h.twin.delay(3);

      h.driver.onError(h.stream(), UNAVAILABLE, 0, "connection reset");
      int mark = h.mark();
      advanceExactly(delay);

      assertThat(h.journalSince(mark)).containsExactly("watch 5 from 10");
    }
  }

  @Nested
  class Probing {
    @Test
    void theFirstSuccessfulProbeBringsALongBackoffForwardToWithinTheProbeJitter() {
      use(config().backoff(Duration.ofSeconds(20), Duration.ofSeconds(60)).probe(ms(250), ms(500)).build());
      startWatchingAt10();
      Duration backoffDelay = h.twin.delay(0);
      Duration soon = Duration.ofNanos(h.twinRandom.nextLong(ms(500).toNanos() + 1));
      assertThat(backoffDelay).as("the seed gives a long first delay").isGreaterThan(Duration.ofSeconds(2));
      h.io.willProbe(false, false, false, true);

      h.driver.onError(h.stream(), UNAVAILABLE, 0, "connection refused");
      Duration brokeAt = h.timer.elapsed();
      int mark = h.mark();
      h.timer.advance(Duration.ofSeconds(1)); // probes at 250, 500 and 750 ms say no; at 1 s yes
      assertThat(h.journalSince(mark))
          .startsWith("probe false", "probe false", "probe false", "probe true");
      h.timer.advance(soon);

      assertThat(h.io.watches()).isEqualTo(2);
      assertThat(h.io.lastFrom()).isEqualTo(10);
      assertThat(h.timer.elapsed().minus(brokeAt)).isLessThanOrEqualTo(ms(1500)).isLessThan(backoffDelay);
    }

    @Test
    void probesThatFailLeaveTheBackoffAlone() {
      use(config().backoff(Duration.ofSeconds(20), Duration.ofSeconds(60)).probe(ms(250), ms(500)).build());
      startWatchingAt10();
      Duration backoffDelay = h.twin.delay(0);

      h.driver.onError(h.stream(), UNAVAILABLE, 0, "connection refused");
      h.timer.advance(backoffDelay.minus(NANO));
      assertThat(h.io.watches()).isEqualTo(1);
      assertThat(h.journal).contains("probe false").doesNotContain("probe true");
      h.timer.advance(NANO);

      assertThat(h.io.watches()).isEqualTo(2);
    }

    @Test
    void probingStopsOnceWatchingAgain() {
      use(config().probe(ms(250), ms(500)).build());
      startWatchingAt10();
      h.driver.onError(h.stream(), UNAVAILABLE, 0, "connection refused");
      h.timer.advance(h.twin.ceiling(0));
      h.driver.onCreated(h.stream(), header(10));
      int mark = h.mark();

      h.timer.advance(Duration.ofSeconds(5));

      assertThat(h.journalSince(mark)).noneMatch(line -> line.startsWith("probe"));
    }
  }

  @Nested
  class StallDetection {
    @Test
    void aSilentWatchGetsAProgressRequestAfterProgressInterval() {
      startWatchingAt10();
      int mark = h.mark();

      h.timer.advance(h.config.progressInterval().minus(ms(1)));
      assertThat(h.journalSince(mark)).isEmpty();
      h.timer.advance(ms(1));

      assertThat(h.journalSince(mark)).containsExactly("requestProgress 1");
    }

    @Test
    void noAnswerWithinProgressTimeoutReportsTheConnectionAndResumesAtTheCheckpoint() {
      startWatchingAt10();
      h.driver.onEvents(h.stream(), header(11), List.of(put("c", 11)));
      int mark = h.mark();

      h.timer.advance(h.config.progressInterval());
      h.timer.advance(h.config.progressTimeout().minus(ms(1)));
      assertThat(h.journalSince(mark)).containsExactly("requestProgress 1");
      h.timer.advance(ms(1));

      assertThat(h.journalSince(mark))
          .containsExactly("requestProgress 1", "connectionFailed", "cancel 1", "stale");
      assertThat(h.driver.state()).isEqualTo(State.BROKEN);
      assertThat(h.driver.isStale()).isTrue();
      assertThat(ids(h.publisher.last().set())).containsExactly("a", "b", "c");

      mark = h.mark();
      h.timer.advance(h.twin.ceiling(0));
      assertThat(h.journalSince(mark)).containsExactly("watch 2 from 11");
    }

    @Test
    void anAnswerInTimeKeepsTheWatch() {
      startWatchingAt10();
      h.timer.advance(h.config.progressInterval());
      h.timer.advance(h.config.progressTimeout().minus(ms(1)));

      h.driver.onProgress(h.stream(), header(10));
      h.timer.advance(h.config.progressTimeout());

      assertThat(h.journal).doesNotContain("connectionFailed", "cancel 1");
      assertThat(h.driver.state()).isEqualTo(State.WATCHING);
      assertThat(h.driver.isStale()).isFalse();
      assertThat(h.driver.lastEventAge()).isLessThan(h.config.progressInterval());
    }

    @Test
    void eventsAreProofOfLifeToo() {
      startWatchingAt10();
      for (long revision = 11; revision < 21; revision++) {
        h.timer.advance(Duration.ofSeconds(6));
        h.driver.onEvents(h.stream(), header(revision), List.of(put("c", revision)));
      }

      assertThat(h.journal).noneMatch(line -> line.startsWith("requestProgress"));
      assertThat(h.driver.state()).isEqualTo(State.WATCHING);
    }
  }

  @Nested
  class DiskSnapshot {
    private final MemoryStore store =
        new MemoryStore(EndpointSet.of(8, List.of(instance("a"), instance("b"), instance("old"))));

    @Test
    void whenTheFirstRangeFailsTheSavedSetIsServedAsStaleThenReplacedByEtcdsTruth() {
      h = new DriverHarness(config().build(), store);
      h.io.willFailRange("connection refused");

      h.driver.start();

      // The stale flag is up before the disk set becomes visible (no reader sees it as fresh); the stale
      // notification follows the publish so that it carries the set actually served.
      assertThat(h.journal).containsExactly("range", "connectionFailed", "publish SNAPSHOT at 8 [a, b, old]", "stale");
      assertThat(h.driver.isStale()).isTrue();
      assertThat(h.publisher.stale).singleElement().satisfies(s -> assertThat(s.set().size()).isEqualTo(3));
      assertThat(h.publisher.stale).singleElement()
          .satisfies(s -> assertThat(s.reason()).contains("connection refused"));

      h.io.willRange(12, put("a", 5), put("c", 11));
      int mark = h.mark();
      h.timer.advance(h.twin.ceiling(0));

      assertThat(h.journalSince(mark)).containsExactly("range", "publish RESYNC at 12 [a, c]", "watch 1 from 12");
      Published p = h.publisher.last();
      assertThat(p.delta().removed()).containsExactlyInAnyOrder(instance("b"), instance("old"));
      assertThat(p.delta().added()).containsExactly(instance("c"));

      h.driver.onCreated(h.stream(), header(12));
      assertThat(h.driver.isStale()).isFalse();
      assertThat(h.publisher.recovered).hasSize(1);
    }

    @Test
    void withoutASavedSetNothingIsPublishedUntilTheFirstRangeSucceeds() {
      h.io.willFailRange("connection refused");
      h.driver.start();
      assertThat(h.publisher.published).isEmpty();
      assertThat(h.driver.isStale()).isTrue();

      h.io.willRange(12, put("a", 5));
      h.timer.advance(h.twin.ceiling(0));

      assertThat(h.publisher.last().delta().kind()).isEqualTo(EndpointDelta.Kind.SNAPSHOT);
      assertThat(h.io.lastFrom()).isEqualTo(12);
    }

    @Test
    void publishedSetsAreSavedDebouncedAndOnClose() {
      MemoryStore empty = new MemoryStore(null);
      h = new DriverHarness(config().snapshotFile(Path.of("unused.json")).snapshotDebounce(Duration.ofSeconds(1))
          .build(), empty);
      startWatchingAt10();
      h.driver.onEvents(h.stream(), header(11), List.of(put("c", 11)));
      assertThat(empty.saved).isEmpty();

      h.timer.advance(Duration.ofSeconds(1));
      assertThat(empty.saved).singleElement().satisfies(s -> assertThat(s.revision()).isEqualTo(11));

      h.driver.onEvents(h.stream(), header(12), List.of(put("d", 12)));
      h.driver.close();
      assertThat(empty.saved).hasSize(2).last().satisfies(s -> assertThat(s.records()).extracting(CacheRecord::key)
          .containsExactly(key("a"), key("b"), key("c"), key("d")));
    }
  }

  @Nested
  class MassRemovalGuard {
    private void startWithFourInstances() {
      use(config().massRemovalGuard(50, Duration.ofSeconds(30)).progressInterval(Duration.ofMinutes(5)).build());
      h.io.willRange(10, put("a", 5), put("b", 6), put("c", 7), put("d", 8));
      h.driver.start();
      h.driver.onCreated(h.stream(), header(10));
    }

    @Test
    void aRevisionRemovingMostInstancesIsHeldThenPublishedWhenTheHoldEnds() {
      startWithFourInstances();
      int mark = h.mark();

      h.driver.onEvents(h.stream(), header(11), List.of(delete("a", 11), delete("b", 11), delete("c", 11)));

      assertThat(h.journalSince(mark)).containsExactly("held 3");
      assertThat(h.publisher.held).singleElement().satisfies(held -> {
        assertThat(ids(held.kept())).containsExactly("a", "b", "c", "d");
        assertThat(held.holdFor()).isEqualTo(Duration.ofSeconds(30));
      });
      assertThat(h.applier.revision()).isEqualTo(11);
      assertThat(h.driver.isHolding()).isTrue();

      h.timer.advance(Duration.ofSeconds(30).minus(ms(1)));
      assertThat(h.journalSince(mark)).containsExactly("held 3");
      h.timer.advance(ms(1));

      assertThat(h.journalSince(mark)).containsExactly("held 3", "publish UPDATE at 11 [d]");
      assertThat(h.publisher.last().delta().removed())
          .containsExactlyInAnyOrder(instance("a"), instance("b"), instance("c"));
      assertThat(h.driver.isHolding()).isFalse();
    }

    @Test
    void theHoldEndsEarlyWhenALaterRevisionBringsTheRemovalWithinTheThreshold() {
      startWithFourInstances();
      h.driver.onEvents(h.stream(), header(11), List.of(delete("a", 11), delete("b", 11), delete("c", 11)));
      h.timer.advance(Duration.ofSeconds(5));
      int mark = h.mark();

      h.driver.onEvents(h.stream(), header(12), List.of(put("a", 12), put("b", 12)));

      assertThat(h.journalSince(mark)).containsExactly("publish UPDATE at 12 [a, b, d]");
      assertThat(h.publisher.last().delta().removed()).containsExactly(instance("c"));
      assertThat(h.publisher.last().delta().added()).isEmpty();
      assertThat(h.driver.isHolding()).isFalse();

      h.timer.advance(Duration.ofSeconds(60));
      assertThat(h.journalSince(mark)).containsExactly("publish UPDATE at 12 [a, b, d]");
    }

    @Test
    void furtherRevisionsThatStillRemoveTooManyKeepHoldingWithoutExtendingTheHold() {
      startWithFourInstances();
      h.driver.onEvents(h.stream(), header(11), List.of(delete("a", 11), delete("b", 11), delete("c", 11)));
      h.timer.advance(Duration.ofSeconds(20));

      h.driver.onEvents(h.stream(), header(12), List.of(put("e", 12)));
      assertThat(h.publisher.published).hasSize(1);
      h.timer.advance(Duration.ofSeconds(10));

      assertThat(ids(h.publisher.last().set())).containsExactly("d", "e");
      assertThat(h.publisher.held).hasSize(1);
    }

    @Test
    void aRemovalWithinTheThresholdIsPublishedAtOnce() {
      startWithFourInstances();

      h.driver.onEvents(h.stream(), header(11), List.of(delete("a", 11), delete("b", 11)));

      assertThat(ids(h.publisher.last().set())).containsExactly("c", "d");
      assertThat(h.publisher.held).isEmpty();
    }
  }

  @Nested
  class FromNowNegativeControl {
    @Test
    void resumesFromNowWithoutARangeAndSoMissesADeleteMadeDuringTheBreak() {
      h = new DriverHarness(config().build(), CacheDriver.ResumeRule.FROM_NOW_NEGATIVE_CONTROL, SnapshotStore.NONE);
      startWatchingAt10();
      h.driver.onError(h.stream(), UNAVAILABLE, 0, "etcd unavailable");
      // Meanwhile b is deleted at revision 12; a watch from "now" never hears of it.
      int mark = h.mark();

      h.timer.advance(h.twin.ceiling(0));
      h.driver.onCreated(h.stream(), header(12));
      h.driver.onEvents(h.stream(), header(13), List.of(put("c", 13)));

      assertThat(h.journalSince(mark)).startsWith("watch 2 from 0");
      assertThat(h.io.rangeCalls()).isEqualTo(1);
      assertThat(ids(h.publisher.last().set())).as("b is still served: the negative control misses it")
          .containsExactly("a", "b", "c");
    }

    @Test
    void evenAnErrorItCannotExplainOnlyReopensFromNow() {
      // A production cache re-ranges after an unexplained cancel (OTHER); the control must not, or a machine that
      // turns a cut into such an error (a watch on a client another cache just replaced) heals what it should miss.
      h = new DriverHarness(config().build(), CacheDriver.ResumeRule.FROM_NOW_NEGATIVE_CONTROL, SnapshotStore.NONE);
      startWatchingAt10();
      h.driver.onError(h.stream(), OTHER, 0, "watch client closed");
      int mark = h.mark();

      h.timer.advance(h.twin.ceiling(0));

      assertThat(h.journalSince(mark)).startsWith("watch 2 from 0");
      assertThat(h.io.rangeCalls()).isEqualTo(1);
      assertThat(h.driver.resyncCount()).isZero();
    }

    @Test
    void evenACompactionOnlyReopensFromNow() {
      h = new DriverHarness(config().build(), CacheDriver.ResumeRule.FROM_NOW_NEGATIVE_CONTROL, SnapshotStore.NONE);
      startWatchingAt10();
      int mark = h.mark();

      h.driver.onError(h.stream(), COMPACTED, 50, "compacted");

      assertThat(h.journalSince(mark)).containsExactly("cancel 1", "watch 2 from 0");
      assertThat(h.driver.resyncCount()).isZero();
    }
  }

  @Nested
  class Closing {
    @Test
    void cancelsTheStreamAndStopsEveryTimer() {
      startWatchingAt10();
      int mark = h.mark();

      h.driver.close();

      assertThat(h.journalSince(mark)).containsExactly("cancel 1");
      assertThat(h.driver.state()).isEqualTo(State.CLOSED);
      assertThat(h.timer.pendingTasks()).isZero();

      h.timer.advance(Duration.ofMinutes(10));
      h.driver.onEvents(1, header(11), List.of(put("c", 11)));
      assertThat(h.journalSince(mark)).containsExactly("cancel 1");
    }

    @Test
    void whileBrokenCancelsThePendingRetryAndProbes() {
      use(config().probe(ms(250), ms(500)).build());
      startWatchingAt10();
      h.driver.onError(h.stream(), UNAVAILABLE, 0, "etcd unavailable");
      int mark = h.mark();

      h.driver.close();
      h.timer.advance(Duration.ofMinutes(1));

      assertThat(h.journalSince(mark)).isEmpty();
      assertThat(h.timer.pendingTasks()).isZero();
    }

    @Test
    void whileHoldingCancelsTheHoldRelease() {
      use(config().massRemovalGuard(50, Duration.ofSeconds(30)).build());
      h.io.willRange(10, put("a", 5), put("b", 6));
      h.driver.start();
      h.driver.onEvents(h.stream(), header(11), List.of(delete("a", 11), delete("b", 11)));
      assertThat(h.driver.isHolding()).isTrue();

      h.driver.close();

      assertThat(h.timer.pendingTasks()).isZero();
    }

    @Test
    void cancelsAPendingDebouncedSaveAndSavesOnceItself() {
      MemoryStore store = new MemoryStore(null);
      h = new DriverHarness(config().snapshotFile(Path.of("unused.json")).build(), store);
      startWatchingAt10();

      h.driver.close();

      assertThat(h.timer.pendingTasks()).isZero();
      h.timer.advance(Duration.ofMinutes(1));
      assertThat(store.saved).hasSize(1);
    }

    @Test
    void isIdempotent() {
      startWatchingAt10();
      h.driver.close();
      int mark = h.mark();

      h.driver.close();

      assertThat(h.journalSince(mark)).isEmpty();
    }
  }

  /** A {@link SnapshotStore} in memory: loads what it was given, keeps what it is asked to save. */
  static final class MemoryStore implements SnapshotStore {
    final List<Stored> saved = new ArrayList<>();
    private final Stored initial;

    /** Holds {@code initial}'s instances as unsigned records (null: nothing). */
    MemoryStore(EndpointSet initial) {
      this.initial = initial == null ? null : new Stored(initial.revision(), initial.instances().stream()
          .map(i -> CacheRecord.put(dev.muster.cache.Endpoints.LAYOUT.instanceKey(i),
              dev.muster.registry.InstanceCodec.encode(i), initial.revision(), 0)).toList());
    }

    @Override
    public Optional<Stored> load() {
      return saved.isEmpty() ? Optional.ofNullable(initial) : Optional.of(saved.get(saved.size() - 1));
    }

    @Override
    public void save(Stored set) {
      saved.add(set);
    }
  }

  /** The audit against etcd 17529 (docs/design-audit.md): the set compared with etcd's keys at the checkpoint. */
  @Nested
  class Audit {
    private static final Duration EVERY = Duration.ofMinutes(5);
    /** progressTimeout: how long an audit past the checkpoint waits before it looks again at what it doubts. */
    private static final Duration CONFIRM = Duration.ofSeconds(5);

    /**
     * {a at 5, b at 7} at revision 10, watch 1 acknowledged, audit every 5 min (each wait within [2.5, 7.5) min); no
     * stall check in the hours the tests advance (nothing answers a progress request here unless a test does).
     */
    private void startAuditing() {
      use(auditing().build());
      startWatchingAt10();
    }

    private CacheConfig.Builder auditing() {
      return config().auditInterval(EVERY).progressInterval(Duration.ofDays(1)).progressTimeout(CONFIRM);
    }

    /** Past the latest the first audit can fire: 1.5 intervals, and the stall check's tick that runs it. */
    private void untilTheAudit() {
      h.timer.advance(EVERY.multipliedBy(3).dividedBy(2).plus(CONFIRM));
    }

    @Test
    void aSetEqualToEtcdsIsLeftAloneAndAuditedAgainAnIntervalLater() {
      startAuditing();
      h.io.willKeys("a", 5, "b", 7).willKeys("a", 5, "b", 7);
      int mark = h.mark();

      untilTheAudit();
      untilTheAudit();

      assertThat(h.journalSince(mark)).containsExactly("keys at 10", "keys at 10");
      assertThat(h.driver.auditCount()).isEqualTo(2);
      assertThat(h.driver.auditDifferenceCount()).isZero();
      assertThat(h.driver.resyncCount()).isZero();
    }

    @Test
    void theFirstAuditWaitsAtLeastHalfTheInterval() {
      startAuditing();
      h.io.willKeys("a", 5, "b", 7);
      int mark = h.mark();

      h.timer.advance(EVERY.dividedBy(2).minus(NANO));

      assertThat(h.journalSince(mark)).isEmpty();
    }

    @Test
    void aLostPutIsFoundAndRepairedByAResync() {
      startAuditing();
      h.io.willKeys("a", 5, "b", 7, "c", 9); // c was created at 9 but its event never came
      h.io.willRange(12, put("a", 5), put("b", 7), put("c", 9));

      untilTheAudit();

      assertThat(h.driver.auditDifferenceCount()).isEqualTo(1);
      assertThat(h.driver.resyncCount()).isEqualTo(1);
      assertThat(ids(h.publisher.last().set())).containsExactly("a", "b", "c");
      assertThat(h.publisher.last().delta().kind()).isEqualTo(EndpointDelta.Kind.RESYNC);
    }

    @Test
    void aLostDeleteIsFound() {
      startAuditing();
      h.io.willKeys("a", 5); // b's lease expired; its DELETE never came
      h.io.willRange(12, put("a", 5));

      untilTheAudit();

      assertThat(h.driver.auditDifferenceCount()).isEqualTo(1);
      assertThat(ids(h.publisher.last().set())).containsExactly("a");
    }

    @Test
    void aLostUpdateIsFoundByItsModRevision() {
      startAuditing();
      h.io.willKeys("a", 5, "b", 9); // b was rewritten at 9 (UP to DRAINING, say); the cache still holds 7
      h.io.willRange(12, put("a", 5), put("b", 9));

      untilTheAudit();

      assertThat(h.driver.auditDifferenceCount()).isEqualTo(1);
      assertThat(h.driver.resyncCount()).isEqualTo(1);
    }

    @Test
    void watchedEventsKeepTheModRevisionsTheAuditCompares() {
      startAuditing();
      h.driver.onEvents(h.stream(), header(11), List.of(put("b", 11)));
      h.driver.onEvents(h.stream(), header(12), List.of(delete("a", 12), put("c", 12)));
      h.io.willKeys("b", 11, "c", 12);

      untilTheAudit();

      assertThat(h.driver.auditCount()).isEqualTo(1);
      assertThat(h.driver.auditDifferenceCount()).isZero();
      assertThat(h.journal).contains("keys at 12");
    }

    @Test
    void aCompactedCheckpointIsAuditedAtTheNextProgressAndADifferenceAnEventInFlightExplainsWaits() {
      startAuditing();
      h.io.willKeysCompacted();
      untilTheAudit();
      assertThat(h.journal).endsWith("keys at 10", "requestProgress 1");

      // A progress at 20 ahead of an event still in flight (etcd 15220): c, written at 15 after the checkpoint 10,
      // may be that event, so nothing acts yet.
      h.io.willKeys("a", 5, "b", 7, "c", 15);
      h.driver.onProgress(h.stream(), header(20));
      assertThat(h.journal).endsWith("keys at 20");
      assertThat(h.driver.auditDifferenceCount()).isZero();

      // The event arrives; the next look is an exact audit at the new checkpoint, and finds nothing.
      h.driver.onEvents(h.stream(), header(20), List.of(put("c", 15)));
      h.io.willKeys("a", 5, "b", 7, "c", 15);
      h.timer.advance(CONFIRM);

      assertThat(h.journal).endsWith("keys at 15");
      assertThat(h.driver.auditDifferenceCount()).isZero();
      assertThat(h.driver.resyncCount()).isZero();
      assertThat(h.driver.auditCount()).isEqualTo(2);
    }

    @Test
    void aDifferenceAnEventInFlightExplainsActsWhenFoundAgainWithTheCheckpointUnmoved() {
      startAuditing();
      h.io.willKeysCompacted();
      untilTheAudit();
      h.io.willKeys("a", 5, "b", 7, "c", 15);
      h.driver.onProgress(h.stream(), header(20));
      h.driver.onProgress(h.stream(), header(20)); // a second progress at once is not the second look
      assertThat(h.driver.auditCount()).isEqualTo(1);
      int mark = h.mark();

      h.timer.advance(CONFIRM.minus(NANO));
      assertThat(h.journalSince(mark)).isEmpty();
      h.timer.advance(NANO);
      assertThat(h.journalSince(mark)).containsExactly("requestProgress 1");
      h.io.willKeys("a", 5, "b", 7, "c", 15);
      h.io.willRange(21, put("a", 5), put("b", 7), put("c", 15));
      h.driver.onProgress(h.stream(), header(21));

      assertThat(h.driver.auditCount()).isEqualTo(2);
      assertThat(h.driver.auditDifferenceCount()).isEqualTo(1);
      assertThat(ids(h.publisher.last().set())).containsExactly("a", "b", "c");
    }

    @Test
    void aKeyEtcdWroteAtOrBeforeTheCheckpointIsALossAtOnceEvenPastTheCheckpoint() {
      startAuditing();
      h.io.willKeysCompacted();
      untilTheAudit();
      h.io.willKeys("a", 5, "b", 7, "c", 9); // c was written at 9, before the checkpoint 10: its event was due
      h.io.willRange(20, put("a", 5), put("b", 7), put("c", 9));

      h.driver.onProgress(h.stream(), header(20));

      assertThat(h.driver.auditDifferenceCount()).isEqualTo(1);
      assertThat(h.driver.resyncCount()).isEqualTo(1);
      assertThat(ids(h.publisher.last().set())).containsExactly("a", "b", "c");
    }

    @Test
    void aSecondLookThatFindsNothingAgainLeavesTheSetAlone() {
      startAuditing();
      h.io.willKeysCompacted();
      untilTheAudit();
      h.io.willKeys("a", 5); // b not in etcd at 20: its delete may be in flight
      h.driver.onProgress(h.stream(), header(20));
      h.timer.advance(CONFIRM);
      h.io.willKeys("a", 5, "b", 7); // etcd's keys at 21 as the cache holds them (a test's etcd, not a real one)
      int mark = h.mark();

      h.driver.onProgress(h.stream(), header(21));

      assertThat(h.journalSince(mark)).containsExactly("keys at 21");
      assertThat(h.driver.auditDifferenceCount()).isZero();
      assertThat(h.driver.resyncCount()).isZero();
    }

    @Test
    void noAuditRunsWhileBrokenAndAResyncRestartsTheInterval() {
      startAuditing();
      h.driver.onError(h.stream(), UNAVAILABLE, 0, "connection refused");
      int mark = h.mark();
      h.io.willProbe(false, false, false, false, false, false, false, false, false, false);
      untilTheAudit();
      assertThat(h.journalSince(mark)).noneMatch(l -> l.startsWith("keys"));
    }

    @Test
    void zeroTurnsTheAuditOffAndTheNegativeControlNeverAudits() {
      use(auditing().auditInterval(Duration.ZERO).build());
      startWatchingAt10();
      h.io.willKeys("a", 5);
      h.timer.advance(Duration.ofHours(1));
      assertThat(h.journal).noneMatch(l -> l.startsWith("keys"));

      h = new DriverHarness(auditing().build(), CacheDriver.ResumeRule.FROM_NOW_NEGATIVE_CONTROL,
          SnapshotStore.NONE);
      startWatchingAt10();
      h.io.willKeys("a", 5);
      h.timer.advance(Duration.ofHours(1));
      assertThat(h.journal).noneMatch(l -> l.startsWith("keys"));
    }

    @Test
    void theNegativeControlHookDropsOneRevisionSilentlyAndTheAuditRepairsIt() {
      use(auditing().build());
      h.driver.dropRevisionForNegativeControl(2);
      startWatchingAt10();
      h.driver.onEvents(h.stream(), header(11), List.of(put("c", 11)));
      h.driver.onEvents(h.stream(), header(12), List.of(delete("a", 12))); // the 2nd revision: dropped
      h.driver.onEvents(h.stream(), header(13), List.of(put("d", 13)));
      assertThat(ids(h.publisher.last().set())).as("a is still served: the loss is silent").contains("a");

      h.io.willKeys("b", 7, "c", 11, "d", 13);
      h.io.willRange(13, put("b", 7), put("c", 11), put("d", 13));
      untilTheAudit();

      assertThat(h.driver.auditDifferenceCount()).isEqualTo(1);
      assertThat(ids(h.publisher.last().set())).containsExactly("b", "c", "d");
    }
  }
}
