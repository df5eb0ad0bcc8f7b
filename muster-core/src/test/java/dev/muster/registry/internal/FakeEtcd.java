package dev.muster.registry.internal;

import dev.muster.registry.Instance;
import dev.muster.registry.internal.RegistrarDriver.Failure;
import dev.muster.registry.internal.RegistrarDriver.IoException;
import dev.muster.registry.internal.RegistrarDriver.PutResult;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;

/**
 * A registry of one key for {@link RegistrarDriver}: leases, the key's holder, a revision counter, and switches a
 * test flips (down, refusing, slow or lost answers, leases that expire on the loop's clock). Every call is journalled with the loop's time, e.g.
 * {@code "1000ms keepAlive 1"}.
 *
 * <p>Not thread-safe; the test thread drives it (through the driver).
 */
final class FakeEtcd implements RegistrarDriver.Io {
  private final FakeLoop loop;
  final List<String> journal = new ArrayList<>();
  /** Live leases and their TTL in seconds. */
  final Map<Long, Long> leases = new LinkedHashMap<>();
  long holder;
  Instance value;
  long revision = 100;
  private long nextLease = 1;
  int resets;

  boolean down;
  boolean refusing;
  /** How long each call takes (time the loop spends blocked in it). */
  Duration callTime = Duration.ZERO;
  /** This many grants fail as unreachable before they work again. */
  int failingGrants;
  /** The next put-if-absent is applied but its answer is lost (a timeout). */
  boolean losePutAnswer;
  /** A lease granted ahead that the next {@link #leaseForStart} hands out; null: it grants one, as by default. */
  RegistrarDriver.Lease ahead;
  /**
   * Leases expire one TTL after their grant or last keepalive, on the loop's clock, checked at each call; off: they
   * live until revoked or {@link #expire}d.
   */
  boolean leasesExpire;
  /** etcd is slow (a loaded machine): it applies every call, but each answer comes after the caller's deadline. */
  boolean answersLate;
  /** How often the key was deleted by its lease's expiry: a consumer saw it leave. */
  int expiredKeys;
  /** When each lease expires ({@link #leasesExpire}), in the loop's elapsed nanoseconds. */
  private final Map<Long, Long> expiresAtNanos = new LinkedHashMap<>();

  FakeEtcd(FakeLoop loop) {
    this.loop = loop;
  }

  private void call(String what) {
    journal.add(loop.elapsed().toMillis() + "ms " + what);
    loop.spend(callTime);
    expireDue();
    if (down) {
      throw new IoException(Failure.UNAVAILABLE, "could not " + what + ": etcd unreachable", null);
    }
    if (refusing) {
      throw new IoException(Failure.REFUSED, "could not " + what + ": permission denied", null);
    }
  }

  @Override
  public long grant(Duration ttl) {
    call("grant");
    if (failingGrants > 0) {
      failingGrants--;
      throw new IoException(Failure.UNAVAILABLE, "could not grant a lease: etcd unreachable", null);
    }
    long id = nextLease++;
    leases.put(id, ttl.toSeconds());
    renew(id, 0);
    answer("grant");
    return id;
  }

  /** The lease's TTL starts again {@code ageNanos} ago. */
  private void renew(long lease, long ageNanos) {
    expiresAtNanos.put(lease, loop.elapsed().toNanos() - ageNanos + Duration.ofSeconds(leases.get(lease)).toNanos());
  }

  private void expireDue() {
    if (!leasesExpire) {
      return;
    }
    long now = loop.elapsed().toNanos();
    for (long lease : List.copyOf(leases.keySet())) {
      Long at = expiresAtNanos.get(lease);
      if (at != null && at <= now) {
        if (holder == lease) {
          expiredKeys++;
        }
        expire(lease);
      }
    }
  }

  /** With {@link #answersLate}, the call was applied and its answer missed the deadline. */
  private void answer(String what) {
    if (answersLate) {
      throw new IoException(Failure.UNAVAILABLE, "could not " + what + ": deadline exceeded", null);
    }
  }

  @Override
  public RegistrarDriver.Lease leaseForStart(Duration ttl) {
    if (ahead == null) {
      return RegistrarDriver.Io.super.leaseForStart(ttl);
    }
    journal.add(loop.elapsed().toMillis() + "ms lease ahead " + ahead.id());
    RegistrarDriver.Lease lease = ahead;
    ahead = null;
    return lease;
  }

  /** A lease of {@code ttlSeconds} granted {@code age} ago, for the next {@link #leaseForStart}. */
  long grantAhead(long ttlSeconds, Duration age) {
    long id = nextLease++;
    leases.put(id, ttlSeconds);
    renew(id, age.toNanos());
    ahead = new RegistrarDriver.Lease(id, age.toNanos(), true);
    return id;
  }

  @Override
  public PutResult putIfAbsent(Instance instance, long lease) {
    call("putIfAbsent " + lease);
    if (!leases.containsKey(lease)) {
      throw new IoException(Failure.LEASE_NOT_FOUND, "could not register: requested lease not found", null);
    }
    if (holder != 0 && leases.containsKey(holder)) {
      answer("register");
      return new PutResult(false, revision, holder);
    }
    holder = lease;
    value = instance;
    revision++;
    if (losePutAnswer) {
      losePutAnswer = false;
      throw new IoException(Failure.UNAVAILABLE, "could not register: deadline exceeded", null);
    }
    answer("register");
    return new PutResult(true, revision, lease);
  }

  @Override
  public long put(Instance instance, long lease) {
    call("put " + lease + " " + instance.state());
    if (!leases.containsKey(lease)) {
      throw new IoException(Failure.LEASE_NOT_FOUND, "could not put: lease not found", null);
    }
    holder = lease;
    value = instance;
    ++revision;
    answer("put");
    return revision;
  }

  @Override
  public long keepAlive(long lease) {
    call("keepAlive " + lease);
    if (leases.containsKey(lease)) {
      renew(lease, 0);
    }
    answer("keep lease " + lease + " alive");
    return leases.getOrDefault(lease, 0L);
  }

  @Override
  public long revoke(long lease) {
    call("revoke " + lease);
    if (leases.remove(lease) == null) {
      throw new IoException(Failure.LEASE_NOT_FOUND, "could not revoke: lease not found", null);
    }
    if (holder == lease) {
      holder = 0;
      value = null;
    }
    ++revision;
    answer("revoke");
    return revision;
  }

  @Override
  public Optional<Duration> remaining(long lease) {
    call("remaining " + lease);
    return Optional.ofNullable(leases.get(lease)).map(Duration::ofSeconds);
  }

  @Override
  public void connectionFailed() {
    journal.add(loop.elapsed().toMillis() + "ms connectionFailed");
    resets++;
  }

  /** The lease expires or is revoked behind the registrar's back; its key goes with it. */
  void expire(long lease) {
    leases.remove(lease);
    expiresAtNanos.remove(lease);
    if (holder == lease) {
      holder = 0;
      value = null;
    }
  }

  /** Someone else holds the key under a lease of its own. */
  long takenBySomeoneElse() {
    long id = 900;
    leases.put(id, 7L);
    holder = id;
    return id;
  }

  List<String> journalSince(int mark) {
    return List.copyOf(journal.subList(mark, journal.size()));
  }
}
