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
import dev.muster.sign.SigningKey;
import dev.muster.sign.TrustedKeys;
import java.util.List;
import org.junit.jupiter.api.Test;

/** An applier with trusted keys: what it serves, excludes and counts. */
class RevisionApplierVerificationTest {
  private static final SigningKey PROVIDER = SigningKey.generate();
  private static final SigningKey ROTATED = SigningKey.generate();
  private static final SigningKey FORGER = SigningKey.generate();
  private static final long LEASE = 0x694d_8a1b_2c3d_4e5fL;

  private final RevisionApplier checking = new RevisionApplier(LAYOUT, PREFIX,
      TrustedKeys.builder().service("default", SERVICE, PROVIDER.trustedKey(), ROTATED.trustedKey()).build());
  private final RevisionApplier plain = new RevisionApplier(LAYOUT, PREFIX);

  private static CacheRecord signed(Instance instance, SigningKey by, long lease, long revision) {
    String key = LAYOUT.instanceKey(instance);
    return CacheRecord.put(key, InstanceCodec.encodeSigned(instance, key, lease, by), revision, lease);
  }

  private static CacheRecord unsigned(String id, long revision) {
    return CacheRecord.put(key(id), InstanceCodec.encode(instance(id)), revision, LEASE);
  }

  @Test
  void onlyRecordsSignedByATrustedKeyForTheirKeyAndLeaseAreServed() {
    CacheRecord good = signed(instance("a"), PROVIDER, LEASE, 5);
    CacheRecord byTheNewKey = signed(instance("b"), ROTATED, LEASE, 6);
    CacheRecord forged = signed(instance("f"), FORGER, LEASE, 7);
    CacheRecord moved = new CacheRecord(CacheRecord.Kind.PUT, key("m"), good.value(), 8, LEASE);
    CacheRecord otherLease = new CacheRecord(CacheRecord.Kind.PUT, key("a2"),
        InstanceCodec.encodeSigned(instance("a2"), key("a2"), LEASE, PROVIDER), 9, LEASE + 1);
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
    String tampered = new String(InstanceCodec.encodeSigned(instance("a"), key("a"), LEASE, PROVIDER), UTF_8)
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
}
