package dev.muster.cache.internal;

import dev.muster.MusterException;
import dev.muster.cache.EndpointDelta;
import dev.muster.cache.EndpointSet;
import dev.muster.registry.Instance;
import dev.muster.registry.InstanceCodec;
import dev.muster.registry.InstanceKey;
import dev.muster.registry.RegistryLayout;
import dev.muster.internal.Json;
import dev.muster.sign.TrustedKeys;
import java.time.Clock;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.OptionalLong;
import java.util.RandomAccess;
import java.util.function.Function;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Applies revisions to the endpoint set: the set is "a snapshot at revision R plus every later revision, applied
 * whole and in order" — the pure part of the consumer (SPEC §4; seed 002's {@code DiscoveryCache}).
 *
 * <p>Invariants:
 * <ul>
 *   <li>{@link #replace} installs a snapshot wholesale (never merges), so a resync cannot leave a deleted
 *       instance behind.
 *   <li>{@link #apply} takes every event of one revision at once. A revision at or below the current one is a
 *       replay and is ignored (etcd 3.4.23 can deliver duplicates); revisions need not be consecutive (writes to
 *       other prefixes advance the store's revision too).
 *   <li>A revision is applied completely or not at all: records are checked before anything changes, and a
 *       record that cannot be trusted (outside the prefix, wrong revision) throws {@link InvalidEventException}
 *       with the set and its revision untouched. The revision (the checkpoint) moves only with a whole revision.
 *   <li>A value that does not decode is not a reason to stop: its key is excluded from the set, counted in
 *       {@link #malformedCount()} and logged once per key and revision. A value that stops decoding removes its
 *       instance.
 *   <li>With trusted keys, a value that decodes but is not accepted ({@link SignedRecords#accept}: it does not
 *       verify, it is older than one accepted for its key, or its signature expired) is handled the same way,
 *       counted in {@link #unverifiedCount()} instead; so is a held record whose signature expires ({@link
 *       #expire}). Decoding comes first, so a record is counted once.
 * </ul>
 *
 * <p>Cost: {@link #apply} works and allocates in O(changed × log n) for n instances. The set is a persistent
 * map (see {@link EndpointSet}), so the next set is the current one plus and minus the revision's keys, sharing
 * everything else; the set it replaces is never modified, so whoever still holds it keeps an unchanged snapshot.
 * The delta is computed from the touched keys only. A PUT is decoded against the instance its key held, sharing
 * every unchanged string, list, map and time with it ({@link InstanceCodec#decode(InstanceKey, byte[], Instance)}),
 * so an update allocates mostly what changed. Nothing on this path walks the whole set, and
 * {@link EndpointSet#instances()} is not called. {@link #replace} rebuilds the set from the snapshot
 * (O(n log n)) and diffs it against the old one (O(n)).
 *
 * <p>Not thread-safe: one thread drives it (the cache's loop). The sets it returns are immutable and may be
 * handed to any thread.
 */
public final class RevisionApplier {
  private static final Logger log = LoggerFactory.getLogger(RevisionApplier.class);

  /**
   * {@link RegistryLayout#keyParser()}: every instance in this applier's sets shares one namespace, one service and
   * one string per version, where {@link RegistryLayout#parseKey} would give each its own copies (about 150 B an
   * instance, and three substrings per applied PUT).
   */
  private final Function<String, InstanceKey> keys;
  private final RegistryLayout layout;
  private final String prefix;
  /** Signatures, sequences and expiries of the records served; empty unless keys are trusted. */
  private final SignedRecords signed;
  private EndpointSet current = EndpointSet.EMPTY;
  private long malformed;
  /**
   * The keys under the prefix that etcd holds and the set does not (a value that does not decode or verify, a key
   * that names no instance), with their mod revisions: what the audit needs besides the set. Usually empty.
   */
  private Map<String, Long> excluded = Collections.emptyMap(); // a HashMap once a key is excluded

  /** A set to publish and what changed to get there. */
  public record Publication(EndpointSet set, EndpointDelta delta) {}

  /** An applier for the keys under {@code prefix} (a service or version prefix of {@code layout}). */
  public RevisionApplier(RegistryLayout layout, String prefix) {
    this(layout, prefix, TrustedKeys.NONE, Clock.systemUTC());
  }

  /**
   * As {@link #RevisionApplier(RegistryLayout, String)}, serving only records that verify against {@code trust}, in
   * order and (once {@link #enforceExpiryFrom enforced}) unexpired by {@code clock}.
   */
  public RevisionApplier(RegistryLayout layout, String prefix, TrustedKeys trust, Clock clock) {
    this.layout = Objects.requireNonNull(layout, "layout");
    this.keys = layout.keyParser();
    this.prefix = Objects.requireNonNull(prefix, "prefix");
    this.signed = new SignedRecords(trust, clock);
  }

  /** As {@link #RevisionApplier(RegistryLayout, String, TrustedKeys, Clock)} on the system clock. */
  public RevisionApplier(RegistryLayout layout, String prefix, TrustedKeys trust) {
    this(layout, prefix, trust, Clock.systemUTC());
  }

  public EndpointSet current() {
    return current;
  }

  RegistryLayout layout() {
    return layout;
  }

  String prefix() {
    return prefix;
  }

  SignedRecords signed() {
    return signed;
  }

  /** The checkpoint: the last revision applied whole (or the snapshot's revision). */
  public long revision() {
    return current.revision();
  }

  /** Values excluded because they did not decode, since this applier was made. */
  public long malformedCount() {
    return malformed;
  }

  /**
   * Values that decoded but were excluded because they did not verify, were older than a value already accepted for
   * their key (replayed), or whose signature expired, since this applier was made.
   */
  public long unverifiedCount() {
    return signed.rejected();
  }

  /** Signatures checked since this applier was made (a record unchanged since it verified is not checked again). */
  public long signatureChecks() {
    return signed.checks();
  }

  /**
   * Enforces signatures' expiry from {@code epochSecond} (Unix time) on; {@link Long#MAX_VALUE}: not at all (the cache
   * is stale). See docs/design-security2.md: the driver sets it to a grace after the cache last became fresh.
   */
  public void enforceExpiryFrom(long epochSecond) {
    signed.enforceExpiryFrom(epochSecond);
  }

  /** When the next held record's signature expires (Unix seconds, counting the enforcement's start); empty if none. */
  public OptionalLong nextExpiry() {
    return signed.nextExpiry();
  }

  /**
   * Removes the held records whose signature has expired at {@code now} (none while expiry is not enforced):
   * the publication (kind UPDATE, the revision unchanged), or empty when none expired.
   */
  public Optional<Publication> expire(Instant now) {
    List<String> gone = signed.expire(now);
    if (gone.isEmpty()) {
      return Optional.empty();
    }
    EndpointSet next = current;
    List<Instance> removed = new ArrayList<>();
    excluded = excluded instanceof HashMap ? excluded : new HashMap<>(excluded);
    for (String key : gone) {
      InstanceKey k = keys.apply(key); // it decoded once: it parses
      next.get(k).ifPresent(removed::add);
      excluded.put(key, next.modRevision(k));
      next = next.minus(k);
    }
    if (removed.isEmpty()) {
      return Optional.empty();
    }
    current = next.atRevision(current.revision());
    return Optional.of(new Publication(current,
        new EndpointDelta(EndpointDelta.Kind.UPDATE, List.of(), removed, List.of())));
  }

  /** Replaces the whole set with a snapshot taken at {@code revision}: never merges with the current set. */
  public Publication replace(long revision, List<CacheRecord> snapshot, EndpointDelta.Kind kind) {
    Snapshot next = snapshot();
    next.add(revision, snapshot);
    return next.install(revision, kind);
  }

  /**
   * A snapshot to be read page by page (a paged range, each page decoded while the next is fetched) and then
   * installed whole, as {@link #replace} does. Nothing of the applier changes until {@link Snapshot#install}; a
   * snapshot abandoned half-way (the range failed, or a page held an untrusted record) leaves no trace.
   */
  public Snapshot snapshot() {
    return new Snapshot();
  }

  /** A snapshot being read; see {@link #snapshot()}. Driven by the applier's thread, like the applier. */
  public final class Snapshot {
    private final List<Instance> instances = new ArrayList<>();
    private long[] modRevisions = new long[16]; // of instances, index for index
    private final Map<String, SignedRecords.Accepted> stillVerified = new HashMap<>(); // installed with the set
    private final Map<String, Long> stillExcluded = new HashMap<>(); // likewise
    private long revision;
    private int records;
    private boolean installed;

    private Snapshot() {}

    /**
     * Decodes one page read at {@code revision} (every page of a snapshot at the same one). Throws
     * {@link InvalidEventException} for a record outside the prefix: the snapshot cannot be trusted and must be
     * dropped.
     */
    public void add(long revision, List<CacheRecord> page) {
      requireOpen();
      if (this.revision != 0 && revision != this.revision) {
        throw new IllegalStateException("a page at revision " + revision + " in a snapshot at " + this.revision);
      }
      this.revision = revision;
      List<InstanceKey> parsed = new ArrayList<>(page.size());
      for (CacheRecord r : page) {
        requireUnderPrefix(r);
        parsed.add(parse(r, revision));
      }
      if (!signed.isEmpty()) {
        signed.checkAhead(page, parsed); // the page's signatures side by side; accepting them stays in order
      }
      for (int i = 0; i < page.size(); i++) {
        CacheRecord r = page.get(i);
        InstanceKey key = parsed.get(i);
        Instance instance = key == null ? null : decode(key, r, revision, stillVerified, null);
        if (instance != null) {
          if (instances.size() == modRevisions.length) {
            modRevisions = Arrays.copyOf(modRevisions, modRevisions.length * 2);
          }
          modRevisions[instances.size()] = r.modRevision();
          instances.add(instance);
        } else {
          stillExcluded.put(r.key(), r.modRevision());
        }
      }
      signed.clearAhead();
      records += page.size();
    }

    /** Records read so far, decoded or not. */
    public int records() {
      return records;
    }

    /** Installs the snapshot as the set at {@code revision}, replacing the current one; once. */
    public Publication install(long revision, EndpointDelta.Kind kind) {
      requireOpen();
      if (this.revision != 0 && revision != this.revision) {
        throw new IllegalStateException("a snapshot read at revision " + this.revision + " installed at " + revision);
      }
      installed = true;
      EndpointSet before = current;
      current = EndpointSet.of(revision, instances, Arrays.copyOf(modRevisions, instances.size()));
      // Empty (the usual case: unsigned records that all decode) as the shared empty map, not 48 B a cache each.
      signed.install(stillVerified);
      excluded = stillExcluded.isEmpty() ? Collections.emptyMap() : stillExcluded;
      return new Publication(current, EndpointDelta.between(kind, before, current));
    }

    private void requireOpen() {
      if (installed) {
        throw new IllegalStateException("this snapshot was installed already; take a new one");
      }
    }
  }

  /**
   * Applies every event of one revision. Returns the publication, or empty when the revision was already
   * applied. Throws {@link InvalidEventException} (nothing applied) when a record cannot be trusted.
   */
  public Optional<Publication> apply(long revision, List<CacheRecord> events) {
    if (revision <= current.revision()) {
      return Optional.empty();
    }
    List<CacheRecord> batch = events instanceof RandomAccess ? events : new ArrayList<>(events);
    for (int i = 0; i < batch.size(); i++) { // by index: an iterator per loop is most of what a loop allocates here
      CacheRecord r = batch.get(i);
      requireUnderPrefix(r);
      if (r.modRevision() != revision) {
        throw new InvalidEventException("event for " + r.key() + " has revision " + r.modRevision()
            + " inside revision " + revision + "'s batch");
      }
    }
    return Optional.of(batch.size() == 1 ? applyOne(revision, batch.get(0)) : applyMany(revision, batch));
  }

  /**
   * The usual watch event: one key. What the set held under it is looked up once, and serves both the decoding
   * (which shares its unchanged parts) and the delta; the new instance is the one decoded.
   */
  private Publication applyOne(long revision, CacheRecord r) {
    InstanceKey key = parse(r, revision);
    Instance old = key == null ? null : current.get(key).orElse(null);
    Instance now = key == null ? null : instanceAfter(key, r, revision, old);
    EndpointSet next = key == null ? current : now != null ? current.plus(now, revision) : current.minus(key);
    noteExcluded(r, now);
    List<Instance> added = old == null && now != null ? List.of(now) : List.of();
    List<Instance> removed = old != null && now == null ? List.of(old) : List.of();
    List<Instance> changed = old != null && now != null && !old.equals(now) ? List.of(now) : List.of();
    current = next.atRevision(revision);
    return new Publication(current, new EndpointDelta(EndpointDelta.Kind.UPDATE, added, removed, changed));
  }

  /**
   * A revision of several events (a transaction), applied in order. Each touched key is looked up in the set before
   * the revision once: that instance is the delta's "before" and what the key's decoding shares parts with.
   */
  private Publication applyMany(long revision, List<CacheRecord> events) {
    EndpointSet before = current;
    EndpointSet next = current; // each plus/minus makes a new set; `current` never changes
    Map<InstanceKey, Instance> touched = new LinkedHashMap<>(); // in order and each once; the value may be null
    for (int i = 0; i < events.size(); i++) {
      CacheRecord r = events.get(i);
      InstanceKey key = parse(r, revision);
      if (key == null) {
        noteExcluded(r, null);
        continue;
      }
      Instance old;
      if (touched.containsKey(key)) {
        old = touched.get(key);
      } else {
        old = before.get(key).orElse(null);
        touched.put(key, old);
      }
      Instance now = instanceAfter(key, r, revision, old);
      next = now != null ? next.plus(now, revision) : next.minus(key);
      noteExcluded(r, now);
    }
    // Lists made only when something goes in: most revisions change one instance, so two of the three stay empty.
    List<Instance> added = null;
    List<Instance> removed = null;
    List<Instance> changed = null;
    for (Map.Entry<InstanceKey, Instance> t : touched.entrySet()) {
      Instance old = t.getValue();
      Instance now = next.get(t.getKey()).orElse(null);
      if (old == null && now != null) {
        added = append(added, now);
      } else if (old != null && now == null) {
        removed = append(removed, old);
      } else if (old != null && !old.equals(now)) {
        changed = append(changed, now);
      }
    }
    current = next.atRevision(revision);
    return new Publication(current,
        new EndpointDelta(EndpointDelta.Kind.UPDATE, orEmpty(added), orEmpty(removed), orEmpty(changed)));
  }

  /**
   * What {@code r} leaves under {@code key}: null for a DELETE, and for a value that does not decode or verify
   * (its instance leaves the set); else the instance, sharing {@code previous}'s unchanged parts (may be null).
   */
  private Instance instanceAfter(InstanceKey key, CacheRecord r, long revision, Instance previous) {
    signed.forget(r.key()); // a watched put is always checked: the memo spares a resync's unchanged records
    if (r.kind() == CacheRecord.Kind.DELETE) {
      return null;
    }
    return decode(key, r, revision, signed.isEmpty() ? null : signed.verified(), previous);
  }

  /** Keeps {@link #excluded} in step with one applied record: {@code now} is what it left in the set (or null). */
  private void noteExcluded(CacheRecord r, Instance now) {
    if (r.kind() == CacheRecord.Kind.PUT && now == null) {
      if (!(excluded instanceof HashMap)) {
        excluded = new HashMap<>();
      }
      excluded.put(r.key(), r.modRevision());
    } else if (!excluded.isEmpty()) {
      excluded.remove(r.key());
    }
  }

  /** One key and the revision that last wrote it, as a keys-only range from etcd gives them. */
  public record KeyRevision(String key, long modRevision) {}

  /**
   * One key where the applier and etcd disagree: the revision that last wrote it in etcd and in the applier, each
   * {@code -1} where the key is absent ({@code excluded}: the applier holds it among the keys it excludes).
   */
  public record Difference(String key, long etcdRevision, long cacheRevision, boolean excluded) {
    /**
     * Whether this difference is a loss for certain when etcd's keys were read at a revision past the checkpoint
     * {@code checkpoint}: etcd last wrote the key at or before the checkpoint, so every event that made it so was
     * due by then. A key etcd wrote later, or one etcd no longer holds, may be an event still on its way.
     */
    public boolean certainAt(long checkpoint) {
      return etcdRevision > 0 && etcdRevision <= checkpoint;
    }

    @Override
    public String toString() {
      if (cacheRevision < 0) {
        return key + ": in etcd at " + etcdRevision + ", not in the cache";
      }
      if (etcdRevision < 0) {
        return key + ": in the cache" + (excluded ? " (excluded)" : "") + " at " + cacheRevision + ", not in etcd";
      }
      return key + ": etcd wrote it at " + etcdRevision + ", the cache holds " + cacheRevision;
    }
  }

  /**
   * The audit's comparison (docs/design-audit.md): the keys etcd holds under the prefix at some revision, with
   * their mod revisions, against what this applier holds (the set and the excluded keys). Returns each key that
   * differs, in etcd's order and then the cache's. O(n) time and a set of etcd's keys.
   */
  public List<Difference> differences(List<KeyRevision> etcd) {
    List<Difference> out = new ArrayList<>();
    java.util.Set<String> theirs = new java.util.HashSet<>(etcd.size() * 2);
    int notInCache = 0;
    for (KeyRevision k : etcd) {
      theirs.add(k.key());
      long mine = modRevisionOf(k.key());
      if (mine < 0) {
        out.add(new Difference(k.key(), k.modRevision(), -1, false));
        notInCache++;
      } else if (mine != k.modRevision()) {
        out.add(new Difference(k.key(), k.modRevision(), mine, excluded.containsKey(k.key())));
      }
    }
    if (theirs.size() - notInCache != current.size() + excluded.size()) { // the applier holds a key etcd does not
      for (java.util.Iterator<Instance> it = current.instances().iterator(); it.hasNext(); ) {
        Instance i = it.next();
        String key = layout.instanceKey(i);
        if (!theirs.contains(key)) {
          out.add(new Difference(key, -1, current.modRevision(i.key()), false));
        }
      }
      for (Map.Entry<String, Long> e : excluded.entrySet()) {
        if (!theirs.contains(e.getKey())) {
          out.add(new Difference(e.getKey(), -1, e.getValue(), true));
        }
      }
    }
    return out;
  }

  /** The mod revision this applier holds for {@code key}: from the set, else from the excluded keys; -1 if none. */
  private long modRevisionOf(String key) {
    Long e = excluded.get(key);
    if (e != null) {
      return e;
    }
    InstanceKey k;
    try {
      k = keys.apply(key);
    } catch (MusterException notAnInstanceKey) {
      return -1;
    }
    return current.modRevision(k);
  }

  private void requireUnderPrefix(CacheRecord r) {
    if (!r.key().startsWith(prefix)) {
      throw new InvalidEventException("event for " + r.key() + " is outside the watched prefix " + prefix);
    }
  }

  /** {@code list} plus {@code instance}: an immutable list of one at first (the delta keeps it without a copy). */
  private static List<Instance> append(List<Instance> list, Instance instance) {
    if (list == null) {
      return List.of(instance);
    }
    List<Instance> to = list instanceof ArrayList ? list : new ArrayList<>(list);
    to.add(instance);
    return to;
  }

  private static List<Instance> orEmpty(List<Instance> list) {
    return list == null ? List.of() : list;
  }

  /** The key's identity, or null (counted and logged for a PUT) if it is not an instance key. */
  private InstanceKey parse(CacheRecord r, long revision) {
    try {
      return keys.apply(r.key());
    } catch (MusterException e) {
      if (r.kind() == CacheRecord.Kind.PUT) {
        countMalformed(r.key(), revision, e.getMessage());
      }
      return null;
    }
  }

  /**
   * The instance of {@code r}, or null if it does not decode or (with trusted keys) is not accepted (see {@link
   * SignedRecords#accept}); a record accepted is added to {@code verifiedOut}.
   */
  private Instance decode(InstanceKey key, CacheRecord r, long revision,
      Map<String, SignedRecords.Accepted> verifiedOut, Instance previous) {
    Instance instance = signed.isEmpty() || !signed.isHeldUnchanged(r) ? null : current.get(key).orElse(null);
    if (instance == null) { // else the bytes the held instance was decoded from: a resync decodes only what changed
      try {
        instance = InstanceCodec.decode(key, r.value(), previous);
      } catch (MusterException e) {
        countMalformed(r.key(), revision, e.getMessage());
        return null;
      }
    }
    return signed.isEmpty() || signed.accept(key, r, revision, verifiedOut) ? instance : null;
  }

  private void countMalformed(String key, long revision, String why) {
    malformed++;
    log.warn("excluded {} at revision {}: {}", Json.show(key), revision, why); // quoted: a key may hold a line feed
  }
}
