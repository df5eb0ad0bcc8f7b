package dev.muster.etcd.internal;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.muster.registry.Instance;
import dev.muster.registry.internal.RegistrarDriver;
import dev.muster.registry.internal.RegistrarDriver.Failure;
import dev.muster.registry.internal.RegistrarDriver.IoException;
import dev.muster.registry.internal.RegistrarDriver.Lease;
import dev.muster.registry.internal.RegistrarDriver.PutResult;
import java.time.Duration;
import java.util.HashMap;
import java.util.HashSet;
import java.util.Map;
import java.util.Optional;
import java.util.OptionalLong;
import java.util.Set;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;

/**
 * {@link SharedLeases} on a model of etcd's leases and keys (the paths a real etcd cannot be made to take on cue:
 * a delete that fails, then succeeds later); {@code SharedLeaseIT} runs the rest on real etcd.
 */
class SharedLeasesTest {
  private static final Duration TTL = Duration.ofSeconds(15);
  private static final Duration INTERVAL = Duration.ofSeconds(5);

  private final AtomicLong now = new AtomicLong(1_000_000_000L);
  private final FakeEtcd etcd = new FakeEtcd();
  private final SharedLeases leases = new SharedLeases(now::get);

  /** etcd as far as a registration sees it: leases, keys with their lease and mod revision, a revision counter. */
  private static final class FakeEtcd {
    long revision = 1;
    long nextLease = 100;
    final Set<Long> live = new HashSet<>();
    final Map<String, long[]> keys = new HashMap<>(); // key -> {lease, modRevision}
    boolean unreachable;
    int grants;
    int keepalives;

    void reachable() {
      if (unreachable) {
        throw new IoException(Failure.UNAVAILABLE, "etcd unreachable", null);
      }
    }

    void revokeLease(long lease) {
      live.remove(lease);
      keys.values().removeIf(v -> v[0] == lease);
      revision++;
    }
  }

  private final class Registration implements RegistrarDriver.Io, SharedLeases.KeyOps {
    final String key;

    Registration(String key) {
      this.key = key;
    }

    RegistrarDriver.Io io() {
      return leases.io(key, INTERVAL, this, this);
    }

    @Override
    public long grant(Duration ttl) {
      etcd.reachable();
      etcd.grants++;
      etcd.live.add(etcd.nextLease);
      return etcd.nextLease++;
    }

    @Override
    public PutResult putIfAbsent(Instance instance, long lease) {
      etcd.reachable();
      if (!etcd.live.contains(lease)) {
        throw new IoException(Failure.LEASE_NOT_FOUND, "lease not found", null);
      }
      long[] held = etcd.keys.get(key);
      if (held != null) {
        return new PutResult(false, etcd.revision, held[0]);
      }
      etcd.keys.put(key, new long[] {lease, ++etcd.revision});
      return new PutResult(true, etcd.revision, lease);
    }

    @Override
    public long put(Instance instance, long lease) {
      etcd.reachable();
      etcd.keys.put(key, new long[] {lease, ++etcd.revision});
      return etcd.revision;
    }

    @Override
    public long keepAlive(long lease) {
      etcd.reachable();
      etcd.keepalives++;
      return etcd.live.contains(lease) ? TTL.toSeconds() : 0;
    }

    @Override
    public long revoke(long lease) {
      etcd.reachable();
      etcd.revokeLease(lease);
      return etcd.revision;
    }

    @Override
    public Optional<Duration> remaining(long lease) {
      return Optional.empty();
    }

    @Override
    public void connectionFailed() {}

    @Override
    public long deleteIf(String k, long modRevision) {
      etcd.reachable();
      long[] held = etcd.keys.get(k);
      if (held != null && held[1] == modRevision) {
        etcd.keys.remove(k);
        etcd.revision++;
      }
      return etcd.revision;
    }

    @Override
    public OptionalLong modRevision(String k) {
      long[] held = etcd.keys.get(k);
      return held == null ? OptionalLong.empty() : OptionalLong.of(held[1]);
    }
  }

  private static Instance instance() {
    return Instance.of("svc", "10.0.0.1", 80);
  }

  /** A registration's start as the driver does it: a lease, then its put. */
  private long register(RegistrarDriver.Io io) {
    Lease l = io.leaseForStart(TTL);
    io.putIfAbsent(instance(), l.id());
    return l.id();
  }

  @Test
  void registrationsShareOneLeaseGrantedOnceAndTheLastCloseRevokesIt() {
    RegistrarDriver.Io a = new Registration("/k/a").io();
    RegistrarDriver.Io b = new Registration("/k/b").io();

    long la = register(a);
    long lb = register(b);

    assertThat(lb).isEqualTo(la);
    assertThat(etcd.grants).isEqualTo(1);
    a.revoke(la);
    assertThat(etcd.keys).containsOnlyKeys("/k/b");
    assertThat(etcd.live).contains(la);
    b.revoke(lb);
    assertThat(etcd.keys).isEmpty();
    assertThat(etcd.live).doesNotContain(la);
    assertThat(leases.stats()).containsEntry("shared_lease.live", 0L);
  }

  @Test
  void keepalivesWithinHalfAnIntervalOfAnAnswerAreAnsweredFromIt() {
    RegistrarDriver.Io a = new Registration("/k/a").io();
    RegistrarDriver.Io b = new Registration("/k/b").io();
    long lease = register(a);
    register(b);
    now.addAndGet(INTERVAL.toNanos());

    assertThat(a.keepAlive(lease)).isEqualTo(15);
    now.addAndGet(INTERVAL.toNanos() / 2 - 1);
    assertThat(b.keepAlive(lease)).isEqualTo(15);
    assertThat(etcd.keepalives).isEqualTo(1);
    now.addAndGet(1);
    b.keepAlive(lease);
    assertThat(etcd.keepalives).isEqualTo(2);
  }

  @Test
  void aLostLeaseIsSeenByEveryUserAndTheNextGrantIsANewSharedLease() {
    RegistrarDriver.Io a = new Registration("/k/a").io();
    RegistrarDriver.Io b = new Registration("/k/b").io();
    long lease = register(a);
    register(b);
    etcd.revokeLease(lease);
    now.addAndGet(INTERVAL.toNanos());

    assertThat(a.keepAlive(lease)).isZero();
    assertThat(b.keepAlive(lease)).isZero(); // from the shared state: no round trip
    assertThat(etcd.keepalives).isEqualTo(1);
    long renewedA = a.grant(TTL);
    a.putIfAbsent(instance(), renewedA);
    long renewedB = b.grant(TTL);

    assertThat(renewedB).isEqualTo(renewedA).isNotEqualTo(lease);
    assertThat(etcd.grants).isEqualTo(2);
  }

  @Test
  void theSameKeyTwiceGetsALeaseOfItsOwnSoItsPutMeetsTheHolder() {
    RegistrarDriver.Io first = new Registration("/k/a").io();
    RegistrarDriver.Io second = new Registration("/k/a").io();
    long shared = register(first);

    Lease own = second.leaseForStart(TTL);
    PutResult r = second.putIfAbsent(instance(), own.id());

    assertThat(own.id()).isNotEqualTo(shared);
    assertThat(r.created()).isFalse();
    assertThat(r.holderLease()).isEqualTo(shared);
    second.revoke(own.id()); // the driver revokes the lease it took for a refused duplicate
    assertThat(etcd.live).contains(shared).doesNotContain(own.id());
    assertThat(etcd.keys).containsKey("/k/a");
  }

  @Test
  void aDeleteEtcdCouldNotBeReachedForIsRetriedByTheNextRevokeOrTheNextAnsweredKeepalive() {
    Registration ra = new Registration("/k/a");
    RegistrarDriver.Io a = ra.io();
    RegistrarDriver.Io b = new Registration("/k/b").io();
    long lease = register(a);
    register(b);

    etcd.unreachable = true;
    assertThatThrownBy(() -> a.revoke(lease)).isInstanceOf(IoException.class);
    etcd.unreachable = false;
    assertThat(etcd.keys).containsKey("/k/a"); // still there, on a lease b keeps alive

    now.addAndGet(INTERVAL.toNanos());
    b.keepAlive(lease); // answered: the registry deletes what a closed registration left
    assertThat(etcd.keys).containsOnlyKeys("/k/b");
    a.revoke(lease); // the driver's retry finds nothing left to do
    assertThat(etcd.live).contains(lease);
  }

  @Test
  void aCloseAfterAnUpdateDeletesTheKeyAtItsLastWriteOnly() {
    Registration ra = new Registration("/k/a");
    RegistrarDriver.Io a = ra.io();
    RegistrarDriver.Io b = new Registration("/k/b").io();
    long lease = register(a);
    register(b);
    a.put(instance(), lease); // an update (or DRAINING)

    a.revoke(lease);

    assertThat(etcd.keys).containsOnlyKeys("/k/b");
  }
}
