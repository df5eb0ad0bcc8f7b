package dev.muster.cache.internal;

import static dev.muster.cache.Endpoints.LAYOUT;
import static dev.muster.cache.Endpoints.PREFIX;
import static dev.muster.cache.Endpoints.SERVICE;
import static dev.muster.cache.Endpoints.ids;
import static dev.muster.cache.Endpoints.instance;
import static dev.muster.cache.Endpoints.key;
import static java.nio.charset.StandardCharsets.UTF_8;
import static org.assertj.core.api.Assertions.assertThat;

import dev.muster.cache.EndpointDelta;
import dev.muster.cache.internal.RevisionApplier.Publication;
import dev.muster.registry.Instance;
import dev.muster.registry.InstanceCodec;
import dev.muster.registry.InstanceState;
import dev.muster.sign.SigningKey;
import dev.muster.sign.TrustedKeys;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneId;
import java.time.ZoneOffset;
import java.util.List;
import org.junit.jupiter.api.Test;

/** An applier with trusted keys: what it serves, excludes and counts. */
class RevisionApplierVerificationTest {
  private static final SigningKey PROVIDER = SigningKey.generate();
  private static final SigningKey ROTATED = SigningKey.generate();
  private static final SigningKey FORGER = SigningKey.generate();
  private static final long LEASE = 0x694d_8a1b_2c3d_4e5fL;
  private static final Instant T0 = Instant.parse("2026-12-05T10:00:00Z");
  /** Every record's signature is good until then, unless a test says otherwise. */
  private static final Instant NOT_AFTER = T0.plus(Duration.ofMinutes(10));

  private final Now now = new Now();
  private final RevisionApplier checking = new RevisionApplier(LAYOUT, PREFIX,
      TrustedKeys.builder().service("default", SERVICE, PROVIDER.trustedKey(), ROTATED.trustedKey()).build(), now);
  private final RevisionApplier plain = new RevisionApplier(LAYOUT, PREFIX);

  /** A record of {@code instance} signed by {@code by}, its sequence the revision it is written at. */
  private static CacheRecord signed(Instance instance, SigningKey by, long lease, long revision) {
    return signed(instance, by, lease, revision, revision, NOT_AFTER);
  }

  private static CacheRecord signed(Instance instance, SigningKey by, long lease, long revision, long seq,
      Instant notAfter) {
    String key = LAYOUT.instanceKey(instance);
    return CacheRecord.put(key, InstanceCodec.encodeSigned(instance, key, lease, seq, notAfter, by, false), revision,
        lease);
  }

  /** The record {@code r} put again at {@code revision}, value for value (as a replay writes it). */
  private static CacheRecord again(CacheRecord r, long revision) {
    return new CacheRecord(CacheRecord.Kind.PUT, r.key(), r.value(), revision, r.lease());
  }

  private static CacheRecord unsigned(String id, long revision) {
    return CacheRecord.put(key(id), InstanceCodec.encode(instance(id)), revision, LEASE);
  }

  @Test
  void aPageLargeEnoughToBeCheckedSideBySideGetsTheSameVerdictsAsOneCheckedInOrder() {
    List<CacheRecord> page = new java.util.ArrayList<>();
    List<String> good = new java.util.ArrayList<>();
    for (int i = 0; i < 3 * SignedRecords.AHEAD_MIN; i++) {
      String id = String.format("i%03d", i);
      CacheRecord r = signed(instance(id), i % 7 == 3 ? FORGER : PROVIDER, LEASE, 5 + i);
      if (i % 11 == 5) { // a good signature moved to another key
        r = new CacheRecord(CacheRecord.Kind.PUT, key(id + "-moved"), r.value(), r.modRevision(), LEASE);
      } else if (i % 7 != 3) {
        good.add(id);
      }
      page.add(r);
    }

    checking.replace(500, page, EndpointDelta.Kind.SNAPSHOT);

    assertThat(ids(checking.current())).containsExactlyElementsOf(good);
    assertThat(checking.unverifiedCount()).isEqualTo(page.size() - good.size());
    assertThat(checking.signatureChecks()).isEqualTo(page.size());

    checking.replace(501, page, EndpointDelta.Kind.RESYNC); // nothing changed: the memo, no signature checked
    assertThat(ids(checking.current())).containsExactlyElementsOf(good);
    assertThat(checking.signatureChecks()).isEqualTo(page.size() + (page.size() - good.size()));
  }

  @Test
  void onlyRecordsSignedByATrustedKeyForTheirKeyAndLeaseAreServed() {
    CacheRecord good = signed(instance("a"), PROVIDER, LEASE, 5);
    CacheRecord byTheNewKey = signed(instance("b"), ROTATED, LEASE, 6);
    CacheRecord forged = signed(instance("f"), FORGER, LEASE, 7);
    CacheRecord moved = new CacheRecord(CacheRecord.Kind.PUT, key("m"), good.value(), 8, LEASE);
    CacheRecord otherLease = new CacheRecord(CacheRecord.Kind.PUT, key("a2"),
        InstanceCodec.encodeSigned(instance("a2"), key("a2"), LEASE, 9, NOT_AFTER, PROVIDER, false), 9, LEASE + 1);
    List<CacheRecord> snapshot = List.of(good, byTheNewKey, forged, moved, otherLease, unsigned("u", 10));

    checking.replace(20, snapshot, EndpointDelta.Kind.SNAPSHOT);
    plain.replace(20, snapshot, EndpointDelta.Kind.SNAPSHOT);

    assertThat(ids(checking.current())).containsExactly("a", "b");
    assertThat(checking.unverifiedCount()).isEqualTo(4);
    assertThat(checking.malformedCount()).isZero();
    assertThat(ids(plain.current())).containsExactly("a", "a2", "b", "f", "m", "u");
    assertThat(plain.unverifiedCount()).isZero();
  }

  @Test
  void aRecordThatStopsVerifyingRemovesItsInstanceAndOneThatVerifiesAgainComesBack() {
    checking.replace(20, List.of(signed(instance("a"), PROVIDER, LEASE, 5)), EndpointDelta.Kind.SNAPSHOT);
    String tampered = new String(InstanceCodec.encodeSigned(instance("a"), key("a"), LEASE, 6, NOT_AFTER, PROVIDER, false), UTF_8)
        .replace("\"port\":8080", "\"port\":6666");

    Publication removed = checking.apply(21, List.of(CacheRecord.put(key("a"), tampered.getBytes(UTF_8), 21,
        LEASE))).orElseThrow();
    assertThat(ids(checking.current())).isEmpty();
    assertThat(removed.delta().removed()).containsExactly(instance("a"));
    assertThat(checking.unverifiedCount()).isEqualTo(1);

    Instance reweighted = instance("a").weight(7);
    Publication back = checking.apply(22, List.of(signed(reweighted, PROVIDER, LEASE, 22))).orElseThrow();
    assertThat(checking.current().instances()).containsExactly(reweighted);
    assertThat(back.delta().added()).containsExactly(reweighted);
  }

  @Test
  void aResyncChecksOnlyTheRecordsThatChangedSinceTheyVerified() {
    CacheRecord a = signed(instance("a"), PROVIDER, LEASE, 5);
    checking.replace(20, List.of(a, signed(instance("b"), PROVIDER, LEASE, 6)), EndpointDelta.Kind.SNAPSHOT);
    assertThat(checking.signatureChecks()).isEqualTo(2);

    checking.replace(30, List.of(a, signed(instance("b").weight(5), PROVIDER, LEASE, 25),
        signed(instance("c"), PROVIDER, LEASE, 26)), EndpointDelta.Kind.RESYNC);
    assertThat(checking.signatureChecks()).as("a is unchanged").isEqualTo(4);
    assertThat(ids(checking.current())).containsExactly("a", "b", "c");

    checking.apply(31, List.of(new CacheRecord(CacheRecord.Kind.PUT, a.key(), a.value(), 31, a.lease())));
    assertThat(checking.signatureChecks()).as("a watched put is checked").isEqualTo(5);
  }

  @Test
  void theSameValueOnAnotherLeaseIsCheckedAgainAtAResyncAndExcluded() {
    CacheRecord a = signed(instance("a"), PROVIDER, LEASE, 5);
    checking.replace(20, List.of(a), EndpointDelta.Kind.SNAPSHOT);

    checking.replace(30, List.of(new CacheRecord(CacheRecord.Kind.PUT, a.key(), a.value(), 29, LEASE + 1)),
        EndpointDelta.Kind.RESYNC);

    assertThat(ids(checking.current())).isEmpty();
    assertThat(checking.unverifiedCount()).isEqualTo(1);
  }

  @Test
  void aValueThatDoesNotDecodeCountsAsMalformedNotAsUnverified() {
    checking.replace(20, List.of(CacheRecord.put(key("m"), "{\"port\":8080}".getBytes(UTF_8), 5, LEASE)),
        EndpointDelta.Kind.SNAPSHOT);

    assertThat(checking.malformedCount()).isEqualTo(1);
    assertThat(checking.unverifiedCount()).isZero();
  }

  @Test
  void aServiceWithNoTrustedKeyServesNothing() {
    RevisionApplier otherServiceOnly = new RevisionApplier(LAYOUT, PREFIX,
        TrustedKeys.builder().service("default", "billing", PROVIDER.trustedKey()).build());

    otherServiceOnly.replace(20, List.of(signed(instance("a"), PROVIDER, LEASE, 5)), EndpointDelta.Kind.SNAPSHOT);

    assertThat(ids(otherServiceOnly.current())).isEmpty();
    assertThat(otherServiceOnly.unverifiedCount()).isEqualTo(1);
  }

  /** Issue 35: the provider's older signed UP put back over its DRAINING, on the same lease, is refused. */
  @Test
  void anOlderValuePutBackOverANewerOneIsRefusedAsReplayedAndTheInstanceLeaves() {
    CacheRecord up = signed(instance("a"), PROVIDER, LEASE, 5);
    checking.replace(20, List.of(up), EndpointDelta.Kind.SNAPSHOT);
    CacheRecord draining = signed(instance("a").state(InstanceState.DRAINING), PROVIDER, LEASE, 21);
    checking.apply(21, List.of(draining));
    assertThat(checking.current().instances()).containsExactly(instance("a").state(InstanceState.DRAINING));

    Publication replayed = checking.apply(22, List.of(again(up, 22))).orElseThrow();

    assertThat(ids(checking.current())).as("the key's latest state is unknown: not routable").isEmpty();
    assertThat(replayed.delta().removed()).hasSize(1);
    assertThat(checking.unverifiedCount()).isEqualTo(1);
    assertThat(plain.apply(22, List.of(again(up, 22)))).isPresent(); // the control: an unchecked cache serves it
  }

  @Test
  void theReplayIsRefusedAfterAResyncToo() {
    CacheRecord up = signed(instance("a"), PROVIDER, LEASE, 5);
    checking.replace(20, List.of(up), EndpointDelta.Kind.SNAPSHOT);
    checking.apply(21, List.of(signed(instance("a").state(InstanceState.DRAINING), PROVIDER, LEASE, 21)));

    checking.replace(30, List.of(again(up, 29)), EndpointDelta.Kind.RESYNC); // written while the cache was away

    assertThat(ids(checking.current())).isEmpty();
    assertThat(checking.unverifiedCount()).isEqualTo(1);
  }

  @Test
  void theSameRecordDeliveredAgainIsNotAReplay() {
    CacheRecord up = signed(instance("a"), PROVIDER, LEASE, 5);
    checking.replace(20, List.of(up), EndpointDelta.Kind.SNAPSHOT);
    checking.replace(30, List.of(up), EndpointDelta.Kind.RESYNC);
    checking.apply(31, List.of(again(up, 31)));

    assertThat(ids(checking.current())).containsExactly("a");
    assertThat(checking.unverifiedCount()).isZero();
  }

  /** Issue 35: a record nobody signs again (a crashed provider's lease kept alive by another user) leaves. */
  @Test
  void aHeldRecordWhoseSignatureExpiresLeavesOnceExpiryIsEnforcedAndNotBefore() {
    checking.replace(20, List.of(signed(instance("a"), PROVIDER, LEASE, 5, 5, T0.plusSeconds(60)),
        signed(instance("b"), PROVIDER, LEASE, 6, 6, T0.plusSeconds(600))), EndpointDelta.Kind.SNAPSHOT);
    assertThat(checking.nextExpiry()).as("not enforced yet: the cache is not fresh").isEmpty();

    checking.enforceExpiryFrom(T0.plusSeconds(30).getEpochSecond());
    assertThat(checking.nextExpiry()).hasValue(T0.plusSeconds(60).getEpochSecond());
    now.set(T0.plusSeconds(59));
    assertThat(checking.expire(now.instant())).isEmpty();

    now.set(T0.plusSeconds(60));
    Publication expired = checking.expire(now.instant()).orElseThrow();
    assertThat(ids(expired.set())).containsExactly("b");
    assertThat(expired.set().revision()).isEqualTo(20);
    assertThat(expired.delta().removed()).containsExactly(instance("a"));
    assertThat(checking.unverifiedCount()).isEqualTo(1);
    assertThat(checking.nextExpiry()).hasValue(T0.plusSeconds(600).getEpochSecond());
  }

  @Test
  void whileExpiryIsNotEnforcedAnExpiredRecordIsServedAndExpiresAtTheEnforcementsStart() {
    now.set(T0.plusSeconds(120));
    checking.replace(20, List.of(signed(instance("a"), PROVIDER, LEASE, 5, 5, T0.plusSeconds(60))),
        EndpointDelta.Kind.SNAPSHOT);
    assertThat(ids(checking.current())).as("the cache just came back: its provider may not have signed again yet")
        .containsExactly("a");

    checking.enforceExpiryFrom(T0.plusSeconds(150).getEpochSecond());
    assertThat(checking.nextExpiry()).hasValue(T0.plusSeconds(150).getEpochSecond());
    assertThat(checking.expire(now.instant())).isEmpty();
    now.set(T0.plusSeconds(150));
    assertThat(ids(checking.expire(now.instant()).orElseThrow().set())).isEmpty();

    checking.apply(21, List.of(signed(instance("b"), PROVIDER, LEASE, 21, 21, T0.plusSeconds(100))));
    assertThat(ids(checking.current())).as("enforced: refused at once").isEmpty();
    assertThat(checking.unverifiedCount()).isEqualTo(2);

    checking.enforceExpiryFrom(Long.MAX_VALUE); // stale again
    assertThat(checking.nextExpiry()).isEmpty();
  }

  @Test
  void aRecordSignedAgainBeforeItsExpiryStays() {
    checking.replace(20, List.of(signed(instance("a"), PROVIDER, LEASE, 5, 5, T0.plusSeconds(60))),
        EndpointDelta.Kind.SNAPSHOT);
    checking.enforceExpiryFrom(T0.getEpochSecond());
    now.set(T0.plusSeconds(30));
    checking.apply(21, List.of(signed(instance("a"), PROVIDER, LEASE, 21, 21, T0.plusSeconds(90))));

    now.set(T0.plusSeconds(60));
    assertThat(checking.expire(now.instant())).isEmpty();
    assertThat(ids(checking.current())).containsExactly("a");
    assertThat(checking.nextExpiry()).hasValue(T0.plusSeconds(90).getEpochSecond());
  }

  /** A clock the test moves. */
  private static final class Now extends Clock {
    private volatile Instant now = T0;

    void set(Instant instant) {
      now = instant;
    }

    @Override
    public Instant instant() {
      return now;
    }

    @Override
    public ZoneId getZone() {
      return ZoneOffset.UTC;
    }

    @Override
    public Clock withZone(ZoneId zone) {
      return this;
    }
  }
}
