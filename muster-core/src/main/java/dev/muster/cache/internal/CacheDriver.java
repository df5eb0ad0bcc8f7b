package dev.muster.cache.internal;

import dev.muster.MusterException;
import dev.muster.cache.CacheConfig;
import dev.muster.cache.EndpointDelta;
import dev.muster.cache.EndpointSet;
import dev.muster.cache.internal.RevisionApplier.Publication;
import dev.muster.internal.Backoff;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.Optional;
import java.util.function.LongSupplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/*
 * Longer than our 500-line guide: the transitions and the I/O contract they drive (Io, Timer, Publisher) are
 * meant to be read together, in one place; the mass-removal guard and the apply logic live in their own files.
 */
/**
 * The consumer's state machine (SPEC §4, seed 000 figure 16-3), with its I/O behind {@link Io} so the same code
 * runs against etcd and against scripted streams on a fake clock.
 *
 * <pre>
 * Syncing  --range ok (rev R)-->            Watching from R, publish snapshot (replace)
 * Watching --events of revision r-->        apply all events of r atomically, publish, last = r
 * Watching --stream error / no leader / stall-->  Broken (keep set, mark stale, since = now)
 * Broken   --backoff elapsed (or etcd reachable again)-->  Watching from last
 * Watching --compacted-->                   Syncing (full range, replace, never merge)
 * any      --revision backwards, cluster id changed, untrusted event-->  Syncing
 * Syncing  --range refused: permission denied, authentication failed-->  Failed (terminal: keep set, stale)
 * </pre>
 *
 * <p>A watch etcd refuses arrives as a cancelled stream with no code to tell a denial from anything else (jetcd
 * 0.8.6); such a stream resyncs after the backoff, and the range tells: refused, the cache fails for good instead
 * of looping (jetcd itself would re-create a denied watch every 500 ms forever).
 *
 * <h2>Where a watch starts: at the checkpoint, never after it</h2>
 * Every watch this class opens starts at {@code last}, the revision the applier already holds: at R after a range at R
 * (the first one and every resync), at {@code last} after a break, a stall or a retry. Not at {@code last + 1},
 * the textbook choice, because etcd 3.4.23 loses events there: a compaction at C removes the DELETE tombstones at
 * C from its backend, yet a watch that starts at exactly C is accepted (C is not below the compaction revision)
 * and replays history without them (etcd issues 18089 and 19179; {@code docs/etcd-watch-bugs.md}). A cache at
 * C - 1 that resumed from C would keep a deleted instance forever. Starting at {@code last} leaves two cases:
 * <ul>
 *   <li>C &le; last. Compaction only touches revisions &le; C; every event the cache still needs has a revision
 *       &gt; last &ge; C, so etcd still holds all of them. Revision {@code last} itself may come back whole, in part
 *       or not at all; the applier ignores every revision &le; its own.
 *   <li>C &gt; last. The start is below the compaction revision: etcd answers "compacted" and the driver resyncs
 *       (full range, replace).
 * </ul>
 * So no watch starts at a revision whose events the cache still needs and a compaction could have taken. The one
 * exception is deliberate: the negative-control policy re-watches "from now" (revision 0) and misses events; the
 * lab uses it to show what the rule prevents.
 *
 * <p>Other rules that make "never silently misses an event" true:
 * <ul>
 *   <li>The checkpoint is the {@link RevisionApplier}'s revision: it moves only when a whole revision is applied or a
 *       snapshot installed. A progress notification proves the stream is alive but never moves it (etcd 3.4.23 can
 *       send a progress revision ahead of events not yet delivered, etcd issue 15220).
 *   <li>Every watch is opened by this class; each has a stream number, and anything from an older stream is ignored
 *       — so a client library that resumes a broken stream on its own (jetcd does, from {@code max(last, header)})
 *       can never feed events into the applier.
 *   <li>Retries follow {@link Backoff} (full jitter), not the transport's. The connection is shared with other
 *       caches and registrations, and this class never replaces it: it reports each failure that blames the
 *       connection ({@link StreamError#UNAVAILABLE}, a stream that ended, a range that could not reach etcd, a
 *       stall) through {@link Io#connectionFailed}, and the connection decides (docs/design-storms.md). A watch or
 *       range that etcd refuses is not reported: it never disturbs anyone else. While broken, a cheap reachability
 *       probe lets the cache resume within {@code probeJitter} of etcd accepting connections again instead of
 *       waiting out a long backoff.
 *   <li>Stall detection: no event or progress for {@code progressInterval} while watching → request progress;
 *       no answer within {@code progressTimeout} → the stream is presumed dead (a half-open connection, or one stuck
 *       stream): report it and resume on a new stream.
 * </ul>
 *
 * <p>Not thread-safe: every method must be called on one thread (the cache's loop), including the tasks it hands
 * to {@link Timer}. The status getters ({@link #isStale()}, ...) read volatile fields and may be called anywhere.
 */
public final class CacheDriver {
  private static final Logger log = LoggerFactory.getLogger(CacheDriver.class);

  /** Where the driver is. */
  public enum State { NEW, SYNCING, WATCHING, BROKEN, FAILED, CLOSED }

  /**
   * Where a broken watch resumes. Not a setting of {@link CacheConfig}: production caches always resume at the
   * checkpoint; only the lab's negative control (consumer C) asks for the lossy rule, through an internal hook.
   */
  public enum ResumeRule {
    /** At the checkpoint ({@code last}), or a full resync when that is compacted: never misses an event. */
    AT_CHECKPOINT,
    /** Negative control (lab consumer C): from "now", never re-ranging; misses whatever happened meanwhile. */
    FROM_NOW_NEGATIVE_CONTROL
  }

  /** A consistent read of the whole prefix, its pages handed to a {@link Pages} as they came: how many records. */
  public record Range(long revision, long clusterId, int records) {}

  /** Takes a range's pages in key order, on the driver's thread. */
  @FunctionalInterface
  public interface Pages {
    /**
     * One page read at {@code revision} (every page of one range at the same revision). May throw
     * {@link InvalidEventException}: the range is then abandoned and the exception passed on.
     */
    void page(long revision, List<CacheRecord> records);
  }

  /** The part of a response header the driver checks. */
  public record Header(long clusterId, long revision) {}

  /** Why a watch stream ended. */
  public enum StreamError {
    /** The start revision was compacted: resync at once. */
    COMPACTED,
    /** The connection broke: resume from {@code last} after the backoff; reported to the connection. */
    UNAVAILABLE,
    /**
     * etcd answered that the member has no leader (a watch with {@code requireLeader} during an election): resume
     * from {@code last} after the backoff, as for {@link #UNAVAILABLE}, but the connection is not in doubt and is
     * not reported. In a rolling restart every member's streams are cancelled this way while the cluster elects,
     * and reporting them replaced clients whose other watches were fine.
     */
    NO_LEADER,
    /**
     * etcd cancelled this watch for another reason (e.g. permission denied): after the backoff, resync (full range,
     * replace). Says nothing against the connection, so it is never replaced for this.
     */
    OTHER
  }

  /** The registry operations, implemented by an adapter (etcd) or a test script. Called on the driver's thread. */
  public interface Io {
    /**
     * Reads every key under the prefix at one revision, handing each page to {@code pages} as it arrives, with the
     * next page already requested (so a page is decoded while the next is fetched). Throws
     * {@link CacheIoException} when it cannot read; whatever {@code pages} throws is passed on.
     */
    Range range(Pages pages);

    /** Opens watch stream {@code stream} from {@code fromRevision} (0: from now); responses come back through the
     *  driver's {@code on*} methods with the same stream number. */
    void watch(long stream, long fromRevision);

    /** Closes stream {@code stream}; nothing more from it will be used. */
    void cancel(long stream);

    void requestProgress(long stream);

    /**
     * The last range, watch or progress request failed in a way that blames the connection (unreachable, no answer
     * in time, a stalled stream), for the reason given. The connection is shared with other caches and
     * registrations and decides itself whether to replace its client; the driver never calls this because etcd
     * refused one watch or range. May block briefly (a shared TCP probe).
     */
    void connectionFailed(String reason);

    /** Whether the registry accepts connections right now (cheap, bounded). */
    boolean probe();

    /**
     * The audit's read: every key under the prefix at {@code revision} with its mod revision, no values (a keys-only
     * range pinned at that revision), in any order; empty when {@code revision} was compacted. Throws
     * {@link CacheIoException} when it cannot read. The default throws that: an Io that cannot audit is never found
     * different (the audit tries again an interval later).
     */
    default Optional<List<RevisionApplier.KeyRevision>> keys(long revision) {
      throw new CacheIoException("this registry cannot audit", null, false);
    }
  }

  /**
   * A range could not be done. {@link #connectionInDoubt()} says whether the connection failed (etcd unreachable,
   * no answer in time) or etcd answered with a refusal (e.g. permission denied), which a new connection would not
   * change.
   */
  public static final class CacheIoException extends RuntimeException {
    private static final long serialVersionUID = 1L;
    private final boolean connectionInDoubt;
    private final transient MusterException refusal;

    public CacheIoException(String message, Throwable cause, boolean connectionInDoubt) {
      super(message, cause);
      this.connectionInDoubt = connectionInDoubt;
      this.refusal = null;
    }

    /** etcd refused the client ({@code refusal} says why): the cache fails for good, no retry can help. */
    public CacheIoException(MusterException refusal) {
      super(refusal.getMessage(), refusal);
      this.connectionInDoubt = false;
      this.refusal = refusal;
    }

    public boolean connectionInDoubt() {
      return connectionInDoubt;
    }

    /** Why etcd refused, when it did for good; empty for failures a retry may fix. */
    public Optional<MusterException> refusal() {
      return Optional.ofNullable(refusal);
    }
  }

  /** Schedules tasks on the driver's thread. */
  public interface Timer {
    /** Runs {@code task} after {@code delay} on the driver's thread; the returned handle cancels it. */
    Runnable schedule(Runnable task, Duration delay);
  }

  /** Receives what the driver publishes, on the driver's thread; implementations hand it to listeners. */
  public interface Publisher {
    void publish(EndpointSet set, EndpointDelta delta);

    void stale(EndpointSet set, Instant since, String reason);

    void recovered(EndpointSet set, Duration staleFor);

    default void held(EndpointSet kept, int wouldRemove, Duration holdFor) {}

    /** The driver stopped for good; {@code set} is the last published set. */
    default void failed(EndpointSet set, MusterException why) {}
  }

  private final CacheConfig config;
  private final ResumeRule rule;
  private final RevisionApplier applier;
  private final Io io;
  private final Timer timer;
  private final Clock clock;
  private final LongSupplier nanoTime;
  private final Backoff backoff;
  private final Publisher publisher;
  private final SnapshotStore store;
  private final MassRemovalGuard guard;

  // Driver-thread state.
  private State state = State.NEW;
  private long stream;
  private long streamSeq;
  private long clusterId;
  private EndpointSet published = EndpointSet.EMPTY;
  private boolean everPublished;
  private int attempts;
  private long createdAtNanos;
  private boolean progressOutstanding;
  private long progressRequestedAtNanos;
  private Runnable cancelRetry = () -> { };
  private Runnable cancelStallCheck = () -> { };
  private Runnable cancelProbe = () -> { };
  private boolean savePending;
  private Runnable cancelSave = () -> { };
  private Runnable cancelHoldRelease = () -> { };
  private Runnable cancelExpiry = () -> { };
  /** The Unix second the expiry timer is armed for; Long.MAX_VALUE: not armed. */
  private long expiryArmedFor = Long.MAX_VALUE;
  /** Whether signatures' expiry is enforced (from a grace after the cache became fresh; never while stale). */
  private boolean expiryOn;
  private Runnable pendingRetry;
  private long retryAtNanos;
  private boolean lastProbeOk;
  private boolean resyncOnRetry;
  private static final Runnable NOTHING = () -> { };
  private Runnable cancelAudit = NOTHING;
  /**
   * When the next audit is due ({@code nanoTime}; 0: none). The stall check's tick runs it: a timer task of its own
   * cost each of 10,000 caches about 110 B while it waited minutes.
   */
  private long auditDueNanos;
  private AuditStep auditStep = AuditStep.IDLE;
  /** What an audit past the checkpoint could not tell from an event in flight, and the checkpoint it was found at. */
  private Suspects auditSuspects = Suspects.NONE;
  /** The negative control's hook: drop the n-th revision watched, before the applier (0: never). */
  private DropRevision dropRevision; // null but in the negative control: 16 B less for every other cache

  // Read from any thread.
  private volatile boolean stale;
  private volatile Instant staleSince;
  private volatile long staleSinceNanos;
  private volatile long lastActivityNanos;
  private long openedAtNanos;
  private volatile long resyncs;
  private volatile long snapshotLoads;
  private volatile long audits;
  private volatile long auditDifferences;
  private volatile MusterException failure;

  public CacheDriver(CacheConfig config, ResumeRule rule, RevisionApplier applier, Io io, Timer timer, Clock clock,
      LongSupplier nanoTime, Backoff backoff, Publisher publisher, SnapshotStore store) {
    this.config = Objects.requireNonNull(config, "config");
    this.rule = Objects.requireNonNull(rule, "rule");
    this.applier = Objects.requireNonNull(applier, "applier");
    this.io = Objects.requireNonNull(io, "io");
    this.timer = Objects.requireNonNull(timer, "timer");
    this.clock = Objects.requireNonNull(clock, "clock");
    this.nanoTime = Objects.requireNonNull(nanoTime, "nanoTime");
    this.backoff = Objects.requireNonNull(backoff, "backoff");
    this.publisher = Objects.requireNonNull(publisher, "publisher");
    this.store = store == null ? SnapshotStore.NONE : store;
    this.guard = new MassRemovalGuard(config.massRemovalPercent());
    this.lastActivityNanos = nanoTime.getAsLong();
  }

  // ---- status (any thread) -------------------------------------------------------------------------

  public boolean isStale() {
    return stale;
  }

  public Optional<Instant> staleSince() {
    return stale ? Optional.ofNullable(staleSince) : Optional.empty();
  }

  public Duration lastEventAge() {
    return Duration.ofNanos(Math.max(0, nanoTime.getAsLong() - lastActivityNanos));
  }

  public long resyncCount() {
    return resyncs;
  }

  /** How many times a set was loaded from the disk snapshot. Any thread. */
  public long snapshotLoadCount() {
    return snapshotLoads;
  }

  /** Audits done (a comparison of the set with etcd's keys; docs/design-audit.md). */
  public long auditCount() {
    return audits;
  }

  /** Audits that found the set different from etcd's (each then resynced). */
  public long auditDifferenceCount() {
    return auditDifferences;
  }

  /**
   * The lab's negative control for the audit: drop the {@code n}-th revision this cache's watches deliver (counted
   * from 1 over the cache's life), before the applier, as etcd 17529 drops events silently. 0 turns it off. Call
   * before {@link #start()}.
   */
  public void dropRevisionForNegativeControl(long n) {
    dropRevision = n > 0 ? new DropRevision(n) : null;
  }

  /** Why the driver stopped for good, if it did. */
  public Optional<MusterException> failure() {
    return Optional.ofNullable(failure);
  }

  // ---- inputs (driver thread) ----------------------------------------------------------------------

  public State state() {
    return state;
  }

  /** The stream number responses must carry to be used (0: none open). */
  public long currentStream() {
    return stream;
  }

  public void start() {
    if (state == State.NEW) {
      sync("start");
    }
  }

  public void close() {
    if (state == State.CLOSED) {
      return;
    }
    closeStream();
    state = State.CLOSED;
    cancelRetry.run();
    cancelProbe.run();
    cancelStallCheck.run();
    cancelHoldRelease.run();
    cancelSave.run();
    cancelAudit.run();
    cancelExpiry.run();
    if (everPublished && config.snapshotFile() != null) {
      store.save(new SnapshotStore.Stored(published.revision(), SavedSets.records(applier, published)));
    }
  }

  /** The watch was created (etcd acknowledged it). */
  public void onCreated(long streamId, Header header) {
    if (!isCurrent(streamId)) {
      return;
    }
    activity();
    createdAtNanos = nanoTime.getAsLong();
    if (doubt(header)) {
      return;
    }
    if (stale) {
      Duration staleFor = Duration.ofNanos(nanoTime.getAsLong() - staleSinceNanos);
      stale = false;
      publisher.recovered(published, staleFor);
    }
    if (!expiryOn) { // fresh: expiry is enforced from a grace on, for providers to sign their records again
      expiryOn = true;
      applier.enforceExpiryFrom(clock.instant().plus(config.expiryGrace()).getEpochSecond());
      armExpiry();
    }
  }

  /**
   * One watch response's events, in order. Events are grouped by revision and each revision is applied whole;
   * etcd never splits one revision across responses (fragmentation is off).
   */
  public void onEvents(long streamId, Header header, List<CacheRecord> events) {
    if (!isCurrent(streamId)) {
      return;
    }
    activity();
    if (doubt(header)) {
      return;
    }
    int i = 0;
    while (i < events.size()) {
      long revision = events.get(i).modRevision();
      List<CacheRecord> batch = new ArrayList<>();
      while (i < events.size() && events.get(i).modRevision() == revision) {
        batch.add(events.get(i++));
      }
      if (dropRevision != null && revision > applier.revision() && ++dropRevision.watched == dropRevision.number) {
        log.warn("negative control: cache of {} drops revision {} ({} event(s)) before applying it",
            config.service(), revision, batch.size());
        continue;
      }
      Optional<Publication> applied;
      try {
        applied = applier.apply(revision, batch);
      } catch (InvalidEventException e) {
        resync("untrusted event: " + e.getMessage());
        return;
      }
      applied.ifPresent(p -> offer(p.set(), p.delta()));
    }
  }

  /** A progress notification: proof of life, never a checkpoint. */
  public void onProgress(long streamId, Header header) {
    if (!isCurrent(streamId)) {
      return;
    }
    activity();
    if (doubt(header)) {
      return;
    }
    if (auditStep == AuditStep.AT_NEXT_PROGRESS || auditStep == AuditStep.CONFIRM_AT_NEXT_PROGRESS) {
      auditPastCheckpoint(header == null ? 0 : header.revision());
    }
  }

  /** The stream failed; {@code compactRevision} is set for {@link StreamError#COMPACTED}. */
  public void onError(long streamId, StreamError error, long compactRevision, String reason) {
    if (!isCurrent(streamId)) {
      return;
    }
    if (error == StreamError.COMPACTED) {
      closeStream();
      if (rule == ResumeRule.FROM_NOW_NEGATIVE_CONTROL) {
        openWatch(0);
      } else {
        resync("the watch from revision " + applier.revision() + " was compacted (compact revision " + compactRevision
            + ")");
      }
      return;
    }
    resyncOnRetry = error == StreamError.OTHER; // a cancel we cannot explain: trust nothing but a fresh range
    if (error == StreamError.UNAVAILABLE) {
      io.connectionFailed(reason);
    }
    broken(reason);
  }

  /** The stream ended without an error. */
  public void onClosed(long streamId) {
    if (isCurrent(streamId)) {
      io.connectionFailed("the watch stream ended"); // etcd ends streams when it shuts down or drops the connection
      broken("the watch stream ended");
    }
  }

  // ---- transitions ---------------------------------------------------------------------------------

  private void sync(String reason) {
    state = State.SYNCING;
    Range range;
    RevisionApplier.Snapshot snapshot = applier.snapshot();
    try {
      range = io.range(snapshot::add);
    } catch (InvalidEventException e) {
      broken("range returned an untrusted record: " + e.getMessage()); // the applier is untouched; retry later
      return;
    } catch (CacheIoException e) {
      if (e.refusal().isPresent()) {
        fail(e.refusal().get());
        return;
      }
      String failure = "range failed: " + e.getMessage();
      if (e.connectionInDoubt()) {
        io.connectionFailed(failure);
      }
      if (!everPublished) {
        store.load().map(stored -> SavedSets.check(applier, stored)).ifPresent(set -> {
          snapshotLoads++; // the loop is the only writer
          log.info("etcd unreachable at start; serving the saved snapshot at revision {} ({} instances)",
              set.revision(), set.size());
          stale = true; // flagged before the set is visible, so no reader sees the disk set as fresh
          expiryOff();
          staleSince = clock.instant();
          staleSinceNanos = nanoTime.getAsLong();
          offer(set, EndpointDelta.between(EndpointDelta.Kind.SNAPSHOT, EndpointSet.EMPTY, set));
          publisher.stale(published, staleSince, failure + "; serving the saved snapshot");
        });
      }
      broken(failure);
      return;
    }
    boolean first = !everPublished;
    EndpointDelta.Kind kind = first ? EndpointDelta.Kind.SNAPSHOT : EndpointDelta.Kind.RESYNC;
    EndpointSet set = snapshot.install(range.revision(), kind).set();
    clusterId = range.clusterId();
    if (!first) {
      resyncs++;
      log.info("resync of {} ({}): {} keys at revision {}", config.service(), reason, range.records(),
          range.revision());
    }
    if (!first && range.revision() == published.revision() && set.asMap().equals(published.asMap())) {
      // Nothing was written since the last publication: a resync that etcd's range did not bear out (for instance a
      // doubt raised by the header of a member still catching up after a restart). The listeners already hold this
      // set at this revision, and the revisions they see only increase: nothing to publish.
      log.info("resync of {} at revision {}: the set already published", config.service(), range.revision());
    } else {
      offer(set, EndpointDelta.between(kind, published, set));
    }
    openWatch(range.revision()); // at R, not R + 1: see "Where a watch starts" above
    armAudit(); // a range is a full audit: the next one is an interval from now
  }

  private void resync(String reason) {
    closeStream();
    if (rule == ResumeRule.FROM_NOW_NEGATIVE_CONTROL && everPublished) {
      openWatch(0);
      return;
    }
    sync(reason);
  }

  private void openWatch(long fromRevision) {
    state = State.WATCHING;
    stream = ++streamSeq;
    progressOutstanding = false;
    createdAtNanos = 0; // set by onCreated: only a watch etcd acknowledged counts towards healthyReset
    openedAtNanos = nanoTime.getAsLong(); // the stall check counts silence from here, lastEventAge does not
    if (auditDueNanos != 0 && openedAtNanos - auditDueNanos >= 0 && auditStep == AuditStep.IDLE) {
      armAudit(); // it fell due while the cache was not watching: an interval from now, as before
    }
    io.watch(stream, fromRevision);
    armStallCheck();
  }

  /** Terminal: etcd refused this cache's user. Nothing is retried; the last set stays, stale. */
  private void fail(MusterException why) {
    closeStream();
    state = State.FAILED;
    cancelAudit.run();
    cancelRetry.run();
    pendingRetry = null;
    cancelProbe.run();
    cancelStallCheck.run();
    cancelHoldRelease.run();
    expiryOff();
    if (!stale) { // no onStale: the failure is the one report, and it says more
      staleSince = clock.instant();
      staleSinceNanos = nanoTime.getAsLong();
      stale = true;
    }
    failure = why;
    log.warn("endpoint cache of {} stopped: {}", config.service(), why.getMessage());
    publisher.failed(published, why);
  }

  private void broken(String reason) {
    closeStream();
    state = State.BROKEN;
    markStale(reason);
    log.info("watch of {} broken: {}", config.service(), reason);
    if (createdAtNanos != 0 && nanoTime.getAsLong() - createdAtNanos >= config.healthyReset().toNanos()) {
      attempts = 0;
    }
    Duration delay = backoff.delay(attempts);
    attempts++;
    scheduleRetry(delay);
    armProbe();
  }

  private void markStale(String reason) {
    expiryOff();
    if (!stale) {
      stale = true;
      staleSince = clock.instant();
      staleSinceNanos = nanoTime.getAsLong();
      publisher.stale(published, staleSince, reason);
    }
  }

  private void retry() {
    pendingRetry = null;
    cancelProbe.run();
    if (state != State.BROKEN) {
      return;
    }
    // the negative control never re-ranges once it has a set, whatever broke the watch: it must miss what it missed
    boolean rerange = applier.revision() == 0 || resyncOnRetry && rule == ResumeRule.AT_CHECKPOINT;
    resyncOnRetry = false;
    if (rerange) {
      sync("reconnect"); // never synced (or only the disk snapshot), or cancelled by etcd: a full range, replacing
    } else if (rule == ResumeRule.FROM_NOW_NEGATIVE_CONTROL) {
      openWatch(0); // the negative control: deliberately lossy
    } else {
      openWatch(applier.revision()); // at last, not last + 1: see "Where a watch starts" above
    }
  }

  private void scheduleRetry(Duration delay) {
    cancelRetry.run();
    pendingRetry = this::retry;
    retryAtNanos = nanoTime.getAsLong() + delay.toNanos();
    Runnable task = pendingRetry;
    cancelRetry = timer.schedule(() -> {
      if (pendingRetry == task) {
        task.run();
      }
    }, delay);
  }

  private void armProbe() {
    cancelProbe.run();
    if (config.probeInterval().isZero()) {
      return;
    }
    lastProbeOk = false;
    cancelProbe = timer.schedule(this::probe, config.probeInterval());
  }

  /** While broken: when etcd starts accepting connections, retry within probeJitter instead of the backoff. */
  private void probe() {
    if (state != State.BROKEN || pendingRetry == null) {
      return;
    }
    boolean ok = io.probe();
    if (ok && !lastProbeOk) {
      long soon = backoff.random().nextLong(config.probeJitter().toNanos() + 1);
      if (soon < retryAtNanos - nanoTime.getAsLong()) {
        scheduleRetry(Duration.ofNanos(soon));
      }
    }
    lastProbeOk = ok;
    cancelProbe = timer.schedule(this::probe, config.probeInterval());
  }

  private void armStallCheck() {
    cancelStallCheck.run();
    Duration every = config.progressInterval().compareTo(config.progressTimeout()) < 0
        ? config.progressInterval() : config.progressTimeout();
    cancelStallCheck = timer.schedule(this::stallCheck, every.dividedBy(2).isZero() ? every : every.dividedBy(2));
  }

  private void stallCheck() {
    if (state != State.WATCHING) {
      return;
    }
    long now = nanoTime.getAsLong();
    if (progressOutstanding && now - progressRequestedAtNanos >= config.progressTimeout().toNanos()) {
      Duration idle = Duration.ofNanos(now - Math.max(lastActivityNanos, openedAtNanos));
      String why = "no events or progress for " + idle.toMillis() + " ms and no answer to a progress request: the"
          + " stream is presumed dead";
      io.connectionFailed(why);
      broken(why);
      return;
    }
    if (!progressOutstanding
        && now - Math.max(lastActivityNanos, openedAtNanos) >= config.progressInterval().toNanos()) {
      progressOutstanding = true;
      progressRequestedAtNanos = now;
      io.requestProgress(stream);
    }
    armStallCheck();
    if (auditDueNanos != 0 && now - auditDueNanos >= 0) {
      auditDueNanos = 0;
      audit(); // may resync, which arms its own stall check
    }
  }

  // ---- the audit (docs/design-audit.md) ------------------------------------------------------------

  /**
   * Where the audit stands. {@code IDLE}: the next audit is armed an interval on. {@code AT_NEXT_PROGRESS}: the
   * checkpoint was compacted, a progress was asked for, and the audit runs at its revision. {@code CONFIRM_WAIT}:
   * that audit found differences an event in flight could explain (etcd 15220: on 3.4 a progress can run ahead of
   * events); they are looked at again after {@code progressTimeout}. {@code CONFIRM_AT_NEXT_PROGRESS}: the checkpoint
   * has not moved since, a progress was asked for, and what is found at its revision again acts.
   */
  private enum AuditStep { IDLE, AT_NEXT_PROGRESS, CONFIRM_WAIT, CONFIRM_AT_NEXT_PROGRESS }

  /** Differences an audit past the checkpoint could not tell from events in flight, and the checkpoint then. */
  private record Suspects(List<RevisionApplier.Difference> differences, long checkpoint) {
    static final Suspects NONE = new Suspects(List.of(), 0);
  }

  /** The negative control's hook: drop the {@code number}-th revision watched; {@code watched} counts them. */
  private static final class DropRevision {
    final long number;
    long watched;

    DropRevision(long number) {
      this.number = number;
    }
  }

  /**
   * The next audit, an interval drawn from [interval/2, 3·interval/2) from now, run by the first stall check tick
   * after it (at most half the shorter of progressInterval and progressTimeout later); none when the interval is 0.
   */
  private void armAudit() {
    cancelAudit.run();
    cancelAudit = NOTHING; // not the done confirmation's handle, which would keep its task
    auditStep = AuditStep.IDLE;
    auditSuspects = Suspects.NONE;
    auditDueNanos = 0;
    if (config.auditInterval().isZero() || rule == ResumeRule.FROM_NOW_NEGATIVE_CONTROL) {
      return; // the lab's consumer C must keep what it missed
    }
    long half = config.auditInterval().toNanos() / 2;
    // not the backoff's random: its draws stay the retries' alone (tests predict them)
    long wait = half + java.util.concurrent.ThreadLocalRandom.current().nextLong(2 * half);
    auditDueNanos = nanoTime.getAsLong() + wait;
    if (auditDueNanos == 0) {
      auditDueNanos = 1;
    }
  }

  /**
   * Compares the set with etcd's keys at the checkpoint R (only while watching; else tried again an interval on).
   * etcd's answer at R leaves out every event the cache has not applied, so any difference is a loss.
   */
  private void audit() {
    if (state != State.WATCHING) {
      armAudit();
      return;
    }
    long checkpoint = applier.revision();
    Optional<List<RevisionApplier.Difference>> found;
    try {
      found = readAndCompare(checkpoint);
    } catch (CacheIoException e) {
      unreadable(checkpoint, e);
      return;
    }
    if (found.isEmpty()) { // compacted past the checkpoint: a quiet prefix; audit at the next progress instead
      auditStep = AuditStep.AT_NEXT_PROGRESS;
      io.requestProgress(stream);
      return;
    }
    List<RevisionApplier.Difference> differences = found.get();
    if (differences.isEmpty()) {
      armAudit();
    } else {
      repair(differences, "at the checkpoint " + checkpoint);
    }
  }

  /**
   * The audit at a progress revision P past the checkpoint R (R was compacted). A key etcd last wrote at or before R
   * that the cache lacks or holds at another revision is a loss for certain and acts at once. Any other difference
   * may be an event written after R and still on its way: it acts only if the next look, {@code progressTimeout}
   * later with the checkpoint unmoved, finds it again.
   */
  private void auditPastCheckpoint(long progressRevision) {
    long checkpoint = applier.revision();
    boolean confirming = auditStep == AuditStep.CONFIRM_AT_NEXT_PROGRESS;
    if (confirming && checkpoint != auditSuspects.checkpoint()) {
      audit(); // events came meanwhile: the audit at the new checkpoint is exact
      return;
    }
    long at = Math.max(progressRevision, checkpoint);
    Optional<List<RevisionApplier.Difference>> found;
    try {
      found = readAndCompare(at);
    } catch (CacheIoException e) {
      unreadable(at, e);
      return;
    }
    if (found.isEmpty()) { // compacted past P too (a compaction at the current revision): try an interval on
      armAudit();
      return;
    }
    List<RevisionApplier.Difference> certain = new ArrayList<>();
    List<RevisionApplier.Difference> unsure = new ArrayList<>();
    for (RevisionApplier.Difference d : found.get()) {
      (d.certainAt(checkpoint) ? certain : unsure).add(d);
    }
    if (!certain.isEmpty()) {
      repair(found.get(), "at progress revision " + at + " past the checkpoint " + checkpoint + ", " + certain.size()
          + " written by etcd at or before the checkpoint");
      return;
    }
    if (confirming) {
      List<RevisionApplier.Difference> again = new ArrayList<>(unsure);
      again.retainAll(auditSuspects.differences());
      if (!again.isEmpty()) {
        repair(again, "at progress revision " + at + " past the checkpoint " + checkpoint + ", found again "
            + config.progressTimeout().toMillis() + " ms after the first look with no event between");
        return;
      }
    }
    if (unsure.isEmpty() || confirming) {
      armAudit();
      return;
    }
    log.info("audit of {} at progress revision {} past the checkpoint {}: {} key(s) may be events in flight (first:"
        + " {}); looking again in {} ms", config.service(), at, checkpoint, unsure.size(), unsure.get(0),
        config.progressTimeout().toMillis());
    auditStep = AuditStep.CONFIRM_WAIT;
    auditSuspects = new Suspects(unsure, checkpoint);
    cancelAudit.run();
    cancelAudit = timer.schedule(this::confirmAudit, config.progressTimeout());
  }

  /** {@code progressTimeout} after differences that may be in flight: look again. */
  private void confirmAudit() {
    if (state != State.WATCHING) {
      armAudit();
    } else if (applier.revision() != auditSuspects.checkpoint()) {
      audit(); // events came: the audit at the new checkpoint is exact
    } else {
      auditStep = AuditStep.CONFIRM_AT_NEXT_PROGRESS;
      io.requestProgress(stream);
    }
  }

  /** etcd's keys at {@code revision} compared with the applier: the differences; empty when it was compacted. */
  private Optional<List<RevisionApplier.Difference>> readAndCompare(long revision) {
    Optional<List<RevisionApplier.KeyRevision>> keys = io.keys(revision);
    if (keys.isEmpty()) {
      return Optional.empty();
    }
    audits++;
    return Optional.of(applier.differences(keys.get()));
  }

  /** etcd could not be read: the watch is not known to be wrong, its own checks handle the connection. */
  private void unreadable(long revision, CacheIoException e) {
    log.debug("audit of {} at revision {} could not read etcd: {}", config.service(), revision, e.getMessage());
    armAudit();
  }

  /** A difference the audit stands by: WARN naming the keys and how it was found, then a resync. */
  private void repair(List<RevisionApplier.Difference> differences, String how) {
    auditDifferences++;
    int shown = Math.min(5, differences.size());
    log.warn("audit of {} {}: the cache differs from etcd in {} key(s) (first {}: {}); resyncing", config.service(),
        how, differences.size(), shown, differences.subList(0, shown).stream().map(Object::toString)
            .collect(java.util.stream.Collectors.joining("; ")));
    resync("the audit " + how + " found " + differences.size() + " key(s) differing from etcd");
  }

  /** A cluster id change or a revision going backwards: the history we hold is not this store's. */
  private boolean doubt(Header header) {
    if (header == null) {
      return false;
    }
    if (clusterId != 0 && header.clusterId() != 0 && header.clusterId() != clusterId) {
      resync("cluster id changed from " + Long.toHexString(clusterId) + " to " + Long.toHexString(header.clusterId()));
      return true;
    }
    if (header.revision() != 0 && header.revision() < applier.revision()) {
      resync("revision went backwards from " + applier.revision() + " to " + header.revision());
      return true;
    }
    return false;
  }

  private void activity() {
    lastActivityNanos = nanoTime.getAsLong();
    progressOutstanding = false;
  }

  private boolean isCurrent(long streamId) {
    return state == State.WATCHING && streamId == stream && streamId != 0;
  }

  private void closeStream() {
    cancelStallCheck.run();
    if (stream != 0) {
      io.cancel(stream);
      stream = 0;
    }
  }

  // ---- publishing, mass-removal guard, disk snapshot -----------------------------------------------

  private void offer(EndpointSet set, EndpointDelta delta) {
    MassRemovalGuard.Decision d = guard.judge(published, set, delta, !everPublished);
    switch (d.verdict()) {
      case PUBLISH -> publishNow(set, d.delta());
      case RELEASE -> {
        cancelHoldRelease.run();
        publishNow(set, d.delta());
      }
      case HOLD_START -> {
        publisher.held(published, d.removed(), config.massRemovalHold());
        cancelHoldRelease = timer.schedule(this::releaseHold, config.massRemovalHold());
      }
      case HOLD -> { }
    }
  }

  private void publishNow(EndpointSet set, EndpointDelta delta) {
    published = set;
    everPublished = true;
    publisher.publish(set, delta);
    scheduleSave();
    armExpiry();
  }

  // ---- signatures' expiry (docs/design-security2.md, item 1) ---------------------------------------

  /** Stale: a consumer that cannot hear etcd does not expire records (their providers may not reach it either). */
  private void expiryOff() {
    expiryOn = false;
    applier.enforceExpiryFrom(Long.MAX_VALUE);
    armExpiry();
  }

  /** (Re)arms the one expiry timer for the applier's next expiry, if it moved. */
  private void armExpiry() {
    long at = applier.nextExpiry().orElse(Long.MAX_VALUE);
    if (at == expiryArmedFor || state == State.CLOSED) {
      return;
    }
    cancelExpiry.run();
    cancelExpiry = NOTHING;
    expiryArmedFor = at;
    if (at != Long.MAX_VALUE) {
      long delayMillis = Math.max(0, at * 1000 - clock.millis());
      cancelExpiry = timer.schedule(this::expire, Duration.ofMillis(delayMillis));
    }
  }

  private void expire() {
    expiryArmedFor = Long.MAX_VALUE;
    if (state == State.CLOSED) {
      return;
    }
    applier.expire(clock.instant()).ifPresent(p -> offer(p.set(), p.delta()));
    armExpiry(); // when nothing was published (or the guard holds it back), offer did not
  }

  private void releaseHold() {
    if (guard.expire()) {
      EndpointSet truth = applier.current();
      publishNow(truth, EndpointDelta.between(EndpointDelta.Kind.UPDATE, published, truth));
    }
  }

  /** True while the mass-removal guard holds back a change. */
  public boolean isHolding() {
    return guard.isHolding();
  }

  private void scheduleSave() {
    if (config.snapshotFile() == null) {
      return;
    }
    if (savePending) {
      return; // a save is already due and will write the newest set
    }
    savePending = true;
    cancelSave = timer.schedule(() -> {
      savePending = false;
      if (state != State.CLOSED) {
        store.save(new SnapshotStore.Stored(published.revision(), SavedSets.records(applier, published)));
      }
    }, config.snapshotDebounce());
  }
}
