package dev.muster.cache.internal;

import static dev.muster.cache.Endpoints.LAYOUT;
import static dev.muster.cache.Endpoints.SERVICE;
import static dev.muster.cache.Endpoints.ids;
import static dev.muster.cache.Endpoints.instance;
import static dev.muster.cache.internal.CacheDriver.StreamError.UNAVAILABLE;
import static dev.muster.cache.internal.DriverHarness.header;
import static org.assertj.core.api.Assertions.assertThat;

import dev.muster.cache.CacheConfig;
import dev.muster.cache.EndpointDelta;
import dev.muster.registry.Instance;
import dev.muster.registry.InstanceCodec;
import dev.muster.sign.SigningKey;
import dev.muster.sign.TrustedKeys;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * The driver's side of signatures' expiry (docs/design-security2.md, item 1): one timer, armed for the applier's
 * next expiry only while the cache is fresh and a grace has passed since it became so; never while it is stale.
 * On the harness's fake clock, which starts at {@link #T0}.
 */
class CacheDriverExpiryTest {
  private static final SigningKey PROVIDER = SigningKey.generate();
  private static final Instant T0 = Instant.parse("2026-11-29T10:00:00Z");
  private static final long LEASE = 0x1234;

  private final DriverHarness h = new DriverHarness(DriverHarness.config()
      .trustedKeys(TrustedKeys.builder().service("default", SERVICE, PROVIDER.trustedKey()).build())
      .expiryGrace(Duration.ofSeconds(30))
      .progressInterval(Duration.ofMinutes(10)).auditInterval(Duration.ZERO) // no stall check, no audit meanwhile
      .build());

  private static CacheRecord signed(Instance instance, long revision, Instant notAfter) {
    String key = LAYOUT.instanceKey(instance);
    return CacheRecord.put(key, InstanceCodec.encodeSigned(instance, key, LEASE, revision, notAfter, PROVIDER,
        false), revision, LEASE);
  }

  @Test
  void aRecordNobodySignsAgainLeavesAtItsNotAfterOnceTheCacheIsFresh() {
    h.io.willRange(10, signed(instance("a"), 5, T0.plusSeconds(90)), signed(instance("b"), 6, T0.plusSeconds(600)));
    h.driver.start();
    h.driver.onCreated(h.stream(), header(10));
    int published = h.publisher.published.size();

    h.timer.advance(Duration.ofSeconds(89));
    assertThat(h.publisher.published).hasSize(published);

    h.timer.advance(Duration.ofSeconds(1));
    assertThat(ids(h.publisher.last().set())).containsExactly("b");
    assertThat(h.publisher.last().delta().kind()).isEqualTo(EndpointDelta.Kind.UPDATE);
    assertThat(h.publisher.last().delta().removed()).containsExactly(instance("a"));
    assertThat(h.publisher.last().set().revision()).isEqualTo(10);
  }

  @Test
  void aRecordExpiredBeforeTheCacheBecameFreshGetsTheGraceToBeSignedAgain() {
    h.timer.advance(Duration.ofSeconds(120)); // the cache starts after an outage: a's signature passed meanwhile
    h.io.willRange(10, signed(instance("a"), 5, T0.plusSeconds(60)));
    h.driver.start();
    h.driver.onCreated(h.stream(), header(10));
    assertThat(ids(h.publisher.last().set())).containsExactly("a");

    h.timer.advance(Duration.ofSeconds(20)); // its provider's first keepalive after etcd answered signs it again
    h.driver.onEvents(h.stream(), header(11), List.of(signed(instance("a"), 11, T0.plusSeconds(740))));
    h.timer.advance(Duration.ofSeconds(30));

    assertThat(ids(h.publisher.last().set())).containsExactly("a");
    assertThat(h.applier.unverifiedCount()).isZero();
  }

  @Test
  void whileTheCacheIsStaleNothingExpiresAndAfterItRecoversTheGraceRunsFirst() {
    h.io.willRange(10, signed(instance("a"), 5, T0.plusSeconds(90)));
    h.driver.start();
    h.driver.onCreated(h.stream(), header(10));
    h.timer.advance(Duration.ofSeconds(60));
    h.driver.onError(h.stream(), UNAVAILABLE, 0, "connection reset"); // etcd is down a while
    assertThat(h.publisher.stale).hasSize(1);

    h.timer.advance(Duration.ofSeconds(40)); // a's notAfter passes while stale (the retried watch is not answered)
    assertThat(ids(h.publisher.last().set())).as("stale: kept").containsExactly("a");

    h.driver.onCreated(h.stream(), header(10));
    assertThat(h.publisher.recovered).hasSize(1);
    h.timer.advance(Duration.ofSeconds(29));
    assertThat(ids(h.publisher.last().set())).as("within the grace").containsExactly("a");

    h.timer.advance(Duration.ofSeconds(2));
    assertThat(ids(h.publisher.last().set())).as("nobody signed it again").isEmpty();
  }
}
