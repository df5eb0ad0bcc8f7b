package dev.muster.cache.internal;

import dev.muster.registry.InstanceKey;
import dev.muster.sign.RecordSignature;
import dev.muster.sign.TrustedKey;
import dev.muster.sign.TrustedKeys;
import dev.muster.sign.UnverifiedRecordException;
import dev.muster.sign.UnverifiedRecordException.Reason;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collection;
import java.util.Collections;
import java.util.HashMap;
import java.util.IdentityHashMap;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.OptionalLong;
import java.util.PriorityQueue;
import java.util.stream.IntStream;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * What a cache with trusted keys knows about the signed records it serves (docs/design-security2.md, item 1): which
 * verified (so that a resync checks only what changed), the highest sequence accepted per key (so that an older
 * value put back is refused), and when each held record's signature expires (so that a record nobody signs again
 * leaves the set, once expiry is enforced).
 *
 * <p>Expiry is enforced only from a moment the cache's driver sets: a grace after the cache last became fresh, never
 * while it is stale (a consumer that cannot hear etcd cannot tell a dead provider from one that cannot reach etcd
 * either, and must not empty its set on etcd's error).
 *
 * <p>Not thread-safe: owned by the {@link RevisionApplier}, driven by the cache's loop.
 */
final class SignedRecords {
  private static final Logger log = LoggerFactory.getLogger(SignedRecords.class);
  /** A key's highest sequence is kept this long after its latest notAfter passed (then EXPIRED refuses the value). */
  static final Duration FORGET_AFTER = Duration.ofHours(1);
  /** {@link #enforceExpiryFrom}'s "not enforced". */
  static final long NEVER = Long.MAX_VALUE;
  /** The fewest signatures {@link #checkAhead} checks side by side (fewer cost less than the hand-off). */
  static final int AHEAD_MIN = 32;

  /** A record that verified: the record, and what its signature said. */
  record Accepted(CacheRecord record, long seq, long notAfter) {}

  private record Highest(long seq, long notAfter) {}

  private record Expiry(long notAfter, String key) {}

  private final TrustedKeys trust;
  private final Clock clock;
  /** The held records that verified, by key; replaced whole when a snapshot installs. */
  private Map<String, Accepted> verified = Collections.emptyMap(); // a HashMap once something verified
  private final Map<String, Highest> highest = new HashMap<>();
  private final PriorityQueue<Expiry> expiries =
      new PriorityQueue<>((a, b) -> Long.compare(a.notAfter(), b.notAfter()));
  /** Outcomes checked ahead ({@link #checkAhead}), by record (identity): a Signed, or the refusal; taken by accept. */
  private Map<CacheRecord, Object> ahead = Collections.emptyMap();
  private long enforceFrom = NEVER;
  private long rejected;
  private long checks;

  SignedRecords(TrustedKeys trust, Clock clock) {
    this.trust = Objects.requireNonNull(trust, "trust");
    this.clock = Objects.requireNonNull(clock, "clock");
  }

  boolean isEmpty() {
    return trust.isEmpty();
  }

  TrustedKeys trust() {
    return trust;
  }

  Clock clock() {
    return clock;
  }

  /** The record as etcd held it that was accepted for {@code key} and is held now, or null. */
  CacheRecord heldRecord(String key) {
    Accepted a = verified.get(key);
    return a == null ? null : a.record();
  }

  /** Records refused since this was made: unverified, replayed or expired. */
  long rejected() {
    return rejected;
  }

  /** Signatures checked (a record unchanged since it verified is not checked again). */
  long checks() {
    return checks;
  }

  /** The held records that verified (the snapshot installs a new map of them). */
  Map<String, Accepted> verified() {
    if (!(verified instanceof HashMap)) {
      verified = new HashMap<>();
    }
    return verified;
  }

  /** A snapshot's records that verified, installed with its set. */
  void install(Map<String, Accepted> stillVerified) {
    verified = stillVerified.isEmpty() ? Collections.emptyMap() : stillVerified;
  }

  /** A watched PUT or DELETE of {@code key}: a put is always checked (the memo spares a resync's unchanged records). */
  void forget(String key) {
    verified.remove(key);
  }

  /**
   * Checks ahead, side by side on the common fork-join pool and the calling thread, the signatures of the records of
   * {@code page} ({@code keys}: each one's parsed key, or null) that {@link #accept} would check, so that it then
   * only looks the outcome up: a cache's first set of 10,000 signed records is checked in a fraction of the time
   * one thread takes. Fewer than {@value #AHEAD_MIN} are left to {@link #accept}. Only the signature is checked
   * here (a pure function of the record and the trusted keys); sequences and expiry stay with {@link #accept}, on
   * the loop. {@link #clearAhead} drops what was not taken.
   */
  void checkAhead(List<CacheRecord> page, List<InstanceKey> keys) {
    int n = page.size();
    int[] todo = new int[n];
    int count = 0;
    for (int i = 0; i < n; i++) {
      CacheRecord r = page.get(i);
      if (keys.get(i) != null && r.kind() == CacheRecord.Kind.PUT && !isHeldUnchanged(r)) {
        todo[count++] = i;
      }
    }
    if (count < AHEAD_MIN) {
      return;
    }
    Object[] outcome = new Object[count];
    List<Collection<TrustedKey>> trusted = new ArrayList<>(count); // looked up here: on the loop
    for (int j = 0; j < count; j++) {
      InstanceKey key = keys.get(todo[j]);
      trusted.add(trust.forService(key.namespace(), key.service()));
    }
    int total = count;
    IntStream.range(0, total).parallel().forEach(j -> {
      CacheRecord r = page.get(todo[j]);
      try {
        outcome[j] = RecordSignature.verify(trusted.get(j), r.key(), r.lease(), r.value());
      } catch (UnverifiedRecordException e) {
        outcome[j] = e;
      }
    });
    ahead = new IdentityHashMap<>(total);
    for (int j = 0; j < total; j++) {
      ahead.put(page.get(todo[j]), outcome[j]);
    }
  }

  /** Drops the outcomes {@link #checkAhead} left that {@link #accept} did not take. */
  void clearAhead() {
    ahead = Collections.emptyMap();
  }

  /** Whether {@code r} is, lease and bytes, the record held for its key since it verified (the memo). */
  boolean isHeldUnchanged(CacheRecord r) {
    Accepted seen = verified.get(r.key());
    return seen != null && seen.record().lease() == r.lease() && Arrays.equals(seen.record().value(), r.value());
  }

  /**
   * Whether {@code r} (decoded as {@code key}) may be served: signed for its key and lease by a key trusted for its
   * service, its sequence not below the highest accepted for the key, and (while expiry is enforced) its notAfter
   * not passed. If so it goes into {@code out}; if not it is counted and logged.
   */
  boolean accept(InstanceKey key, CacheRecord r, long revision, Map<String, Accepted> out) {
    Accepted seen = verified.get(r.key());
    Accepted a;
    Object checked = ahead.isEmpty() ? null : ahead.remove(r);
    if (checked == null && isHeldUnchanged(r)) {
      a = new Accepted(r, seen.seq(), seen.notAfter()); // the same value: the same signature
    } else {
      checks++;
      if (checked instanceof UnverifiedRecordException refusedAhead) {
        return refuse(r.key(), revision, refusedAhead);
      }
      RecordSignature.Signed s;
      try {
        s = checked instanceof RecordSignature.Signed done ? done
            : RecordSignature.verify(trust.forService(key.namespace(), key.service()), r.key(), r.lease(),
                r.value());
      } catch (UnverifiedRecordException e) {
        return refuse(r.key(), revision, e);
      }
      a = new Accepted(r, s.seq(), s.notAfter().getEpochSecond());
    }
    Highest h = highest.get(r.key());
    if (h != null && a.seq() < h.seq()) {
      return refuse(r.key(), revision, new UnverifiedRecordException(r.key(), r.lease(), Reason.REPLAYED,
          "its sequence " + a.seq() + " is below " + h.seq() + ", the highest this cache accepted for the key (an"
              + " older value put back)"));
    }
    long now = clock.instant().getEpochSecond();
    if (a.notAfter() <= now && now >= enforceFrom) {
      return refuse(r.key(), revision, new UnverifiedRecordException(r.key(), r.lease(), Reason.EXPIRED,
          "its signature expired at " + Instant.ofEpochSecond(a.notAfter()) + " (its provider signs again well"
              + " before: a record past it is one nobody renews, or a replay)"));
    }
    if (h == null || a.seq() > h.seq() || a.notAfter() > h.notAfter()) {
      highest.put(r.key(), h == null ? new Highest(a.seq(), a.notAfter())
          : new Highest(Math.max(h.seq(), a.seq()), Math.max(h.notAfter(), a.notAfter())));
    }
    out.put(r.key(), a);
    if (seen == null || seen.notAfter() != a.notAfter()) { // else its expiry is queued already
      expiries.add(new Expiry(a.notAfter(), r.key()));
    }
    return true;
  }

  /** Enforces expiry from {@code epochSecond} on ({@link #NEVER}: not at all, the cache is stale). */
  void enforceExpiryFrom(long epochSecond) {
    enforceFrom = epochSecond;
  }

  /** When the next held record expires, in Unix seconds, counting the enforcement's start; empty if none will. */
  OptionalLong nextExpiry() {
    if (enforceFrom == NEVER) {
      return OptionalLong.empty();
    }
    while (!expiries.isEmpty() && !isHeld(expiries.peek())) {
      expiries.poll();
    }
    return expiries.isEmpty() ? OptionalLong.empty()
        : OptionalLong.of(Math.max(expiries.peek().notAfter(), enforceFrom));
  }

  /**
   * The keys of the held records whose signature has expired at {@code now} (none before expiry is enforced), each
   * counted and logged and no longer held; also forgets the highest sequences of keys long expired.
   */
  List<String> expire(Instant now) {
    long s = now.getEpochSecond();
    forgetOldSequences(s);
    if (s < enforceFrom) {
      return List.of();
    }
    List<String> out = new ArrayList<>();
    while (!expiries.isEmpty() && expiries.peek().notAfter() <= s) {
      Expiry e = expiries.poll();
      if (isHeld(e)) {
        Accepted a = verified.remove(e.key());
        out.add(e.key());
        refuse(e.key(), a.record().modRevision(), new UnverifiedRecordException(e.key(), a.record().lease(),
            Reason.EXPIRED, "its signature expired at " + Instant.ofEpochSecond(e.notAfter()) + " and nobody"
                + " signed it again (its provider is gone, or cannot reach etcd)"));
      }
    }
    return out;
  }

  private boolean isHeld(Expiry e) {
    Accepted a = verified.get(e.key());
    return a != null && a.notAfter() == e.notAfter();
  }

  private void forgetOldSequences(long now) {
    long before = now - FORGET_AFTER.toSeconds();
    for (Iterator<Highest> it = highest.values().iterator(); it.hasNext(); ) {
      if (it.next().notAfter() < before) {
        it.remove();
      }
    }
  }

  private boolean refuse(String key, long revision, UnverifiedRecordException e) {
    rejected++;
    log.warn("excluded {} at revision {}: {}", key, revision, e.getMessage()); // a valid key: no control character
    return false;
  }
}
