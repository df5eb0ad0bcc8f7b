package dev.muster.cache;

import dev.muster.InvalidInputException;
import dev.muster.registry.Names;
import dev.muster.sign.TrustedKeys;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Objects;
import java.util.concurrent.Executor;
import java.util.concurrent.ExecutorService;

/**
 * What an endpoint cache watches and how it keeps up (SPEC §4), and where its listeners run. Immutable (a
 * {@link #listenerExecutor} is compared by identity); {@link #builder(String)} starts from the defaults.
 *
 * @param namespace registry namespace (default {@code default})
 * @param service the service to watch
 * @param version one version only, or null for every version of the service
 * @param pageSize keys per page of the initial range; every page is pinned to the first page's revision (default 1000)
 * @param progressInterval no event or progress notification for this long while watching: request progress
 *     (default 10 s)
 * @param progressTimeout no answer to a progress request for this long: the connection is presumed dead (half-open),
 *     replaced, and the watch resumed (default 5 s)
 * @param backoffBase first reconnect delay; doubles per failure, full jitter (default 100 ms)
 * @param backoffCap largest reconnect delay (default 5 s)
 * @param healthyReset a watch that stayed up this long resets the backoff (default 10 s)
 * @param probeInterval while broken, check this often whether etcd accepts connections again, and if it does, retry
 *     within {@link #probeJitter} instead of waiting out the backoff; zero disables (default 250 ms)
 * @param probeJitter the window a retry triggered by a successful probe is spread over (default 500 ms)
 * @param requestTimeout deadline for each page of a range (default 5 s)
 * @param snapshotFile where to keep the last set on disk, or null for none (default none)
 * @param snapshotDebounce how long after a publish the disk snapshot is written (default 1 s)
 * @param massRemovalPercent hold the last good set when one change would remove more than this share of it;
 *     0 disables (default 0)
 * @param massRemovalHold how long to hold before publishing the removal anyway (default 30 s)
 * @param trustedKeys serve only records signed by a key trusted for this namespace and service, for their key and
 *     lease; exclude the others and count them in {@link EndpointCache#unverifiedCount()} (default
 *     {@link TrustedKeys#NONE}: records are not verified; null means the same). The disk snapshot keeps each record
 *     as etcd held it, signature included, and a cache checks them again when it loads them
 * @param expiryGrace with trusted keys, how long after the cache last became fresh (its first set, or recovered)
 *     a record whose signature's {@code notAfter} has passed is still served, for its provider to sign it again
 *     (each does at its first keepalive after reaching etcd); expiry is never enforced while the cache is stale
 *     (default 30 s; docs/design-security2.md)
 * @param listenerExecutor where this cache's listeners run, for listeners that must block; null runs them on the
 *     process's shared delivery pool, where they must not block (default null). The cache still hands them one
 *     call at a time, in order, never two at once; it never shuts the executor down. Keep it running until the
 *     cache is closed: once it refuses a task, or a {@code shutdownNow()} drops one it had queued, the cache logs
 *     a WARN and runs its listeners on the shared pool from then on, where they must not block; no event is lost
 *     (a dropped delivery arrives with the cache's next change). An executor that runs tasks on the calling thread
 *     (a direct executor, {@code CallerRunsPolicy}) runs listeners on the cache's own loop, and one that discards
 *     tasks while running ({@code DiscardPolicy}) loses deliveries: give neither
 * @param auditInterval how often the cache compares its set with etcd's keys at its own revision (a keys-only range;
 *     docs/design-audit.md), the defence against etcd dropping events silently (etcd 17529); a confirmed difference
 *     is logged (WARN, naming the keys) and repaired by a full resync. Each wait is drawn from [interval/2,
 *     3·interval/2), so caches started together do not audit together; zero turns the audit off (default 5 min)
 */
public record CacheConfig(
    String namespace,
    String service,
    String version,
    int pageSize,
    Duration progressInterval,
    Duration progressTimeout,
    Duration backoffBase,
    Duration backoffCap,
    Duration healthyReset,
    Duration probeInterval,
    Duration probeJitter,
    Duration requestTimeout,
    Path snapshotFile,
    Duration snapshotDebounce,
    int massRemovalPercent,
    Duration massRemovalHold,
    TrustedKeys trustedKeys,
    Duration expiryGrace,
    Executor listenerExecutor,
    Duration auditInterval) {

  public CacheConfig {
    Names.requireValid("namespace", namespace);
    Names.requireValid("service", service);
    if (version != null) {
      Names.requireValid("version", version);
    }
    if (pageSize < 1 || pageSize > 100_000) {
      throw new InvalidInputException("pageSize", pageSize, "use 1 to 100000 keys per page");
    }
    positive("progressInterval", progressInterval);
    positive("progressTimeout", progressTimeout);
    positive("backoffBase", backoffBase);
    positive("backoffCap", backoffCap);
    if (backoffCap.compareTo(backoffBase) < 0) {
      throw new InvalidInputException("backoffCap", backoffCap, "use at least backoffBase (" + backoffBase + ")");
    }
    positive("healthyReset", healthyReset);
    notNegative("probeInterval", probeInterval);
    positive("probeJitter", probeJitter);
    positive("requestTimeout", requestTimeout);
    notNegative("snapshotDebounce", snapshotDebounce);
    if (massRemovalPercent < 0 || massRemovalPercent > 100) {
      throw new InvalidInputException("massRemovalPercent", massRemovalPercent, "use 0 (off) to 100");
    }
    positive("massRemovalHold", massRemovalHold);
    notNegative("expiryGrace", expiryGrace);
    trustedKeys = trustedKeys == null ? TrustedKeys.NONE : trustedKeys;
    if (!trustedKeys.isEmpty() && trustedKeys.forService(namespace, service).isEmpty()) {
      throw new InvalidInputException("trustedKeys", trustedKeys.toString(), "trust at least one key for "
          + namespace + "/" + service + " (or for namespace " + namespace + "), or give none to not verify");
    }
    if (auditInterval == null || auditInterval.isNegative()
        || !auditInterval.isZero() && auditInterval.compareTo(Duration.ofSeconds(1)) < 0) {
      throw new InvalidInputException("auditInterval", auditInterval, "use 1s or more (such as 5m), or 0 to turn the"
          + " audit off");
    }
    if (listenerExecutor instanceof ExecutorService es && es.isShutdown()) {
      throw new InvalidInputException("listenerExecutor", listenerExecutor, "give an executor that is running (this"
          + " one is shut down), or none to run listeners on the shared delivery pool");
    }
  }

  private static void positive(String field, Duration d) {
    Objects.requireNonNull(d, field);
    if (d.isNegative() || d.isZero()) {
      throw new InvalidInputException(field, d, "use a positive duration");
    }
  }

  private static void notNegative(String field, Duration d) {
    Objects.requireNonNull(d, field);
    if (d.isNegative()) {
      throw new InvalidInputException(field, d, "use zero or a positive duration");
    }
  }

  /** The defaults for watching {@code service} in namespace {@code default}, every version. */
  public static Builder builder(String service) {
    return new Builder(service);
  }

  public Builder toBuilder() {
    Builder b = new Builder(service);
    b.namespace = namespace;
    b.version = version;
    b.pageSize = pageSize;
    b.progressInterval = progressInterval;
    b.progressTimeout = progressTimeout;
    b.backoffBase = backoffBase;
    b.backoffCap = backoffCap;
    b.healthyReset = healthyReset;
    b.probeInterval = probeInterval;
    b.probeJitter = probeJitter;
    b.requestTimeout = requestTimeout;
    b.snapshotFile = snapshotFile;
    b.snapshotDebounce = snapshotDebounce;
    b.massRemovalPercent = massRemovalPercent;
    b.massRemovalHold = massRemovalHold;
    b.trustedKeys = trustedKeys;
    b.expiryGrace = expiryGrace;
    b.listenerExecutor = listenerExecutor;
    b.auditInterval = auditInterval;
    return b;
  }

  /** Builds a {@link CacheConfig}; see the record's parameters for each default. */
  public static final class Builder {
    private String namespace = "default";
    private final String service;
    private String version;
    private int pageSize = 1000;
    private Duration progressInterval = Duration.ofSeconds(10);
    private Duration progressTimeout = Duration.ofSeconds(5);
    private Duration backoffBase = Duration.ofMillis(100);
    private Duration backoffCap = Duration.ofSeconds(5);
    private Duration healthyReset = Duration.ofSeconds(10);
    private Duration probeInterval = Duration.ofMillis(250);
    private Duration probeJitter = Duration.ofMillis(500);
    private Duration requestTimeout = Duration.ofSeconds(5);
    private Path snapshotFile;
    private Duration snapshotDebounce = Duration.ofSeconds(1);
    private int massRemovalPercent;
    private Duration massRemovalHold = Duration.ofSeconds(30);
    private TrustedKeys trustedKeys = TrustedKeys.NONE;
    private Duration expiryGrace = Duration.ofSeconds(30);
    private Executor listenerExecutor;
    private Duration auditInterval = Duration.ofMinutes(5);

    private Builder(String service) {
      this.service = service;
    }

    public Builder namespace(String namespace) {
      this.namespace = namespace;
      return this;
    }

    public Builder version(String version) {
      this.version = version;
      return this;
    }

    public Builder pageSize(int pageSize) {
      this.pageSize = pageSize;
      return this;
    }

    public Builder progressInterval(Duration d) {
      this.progressInterval = d;
      return this;
    }

    public Builder progressTimeout(Duration d) {
      this.progressTimeout = d;
      return this;
    }

    public Builder backoff(Duration base, Duration cap) {
      this.backoffBase = base;
      this.backoffCap = cap;
      return this;
    }

    public Builder healthyReset(Duration d) {
      this.healthyReset = d;
      return this;
    }

    public Builder probe(Duration interval, Duration jitter) {
      this.probeInterval = interval;
      this.probeJitter = jitter;
      return this;
    }

    public Builder requestTimeout(Duration d) {
      this.requestTimeout = d;
      return this;
    }

    public Builder snapshotFile(Path file) {
      this.snapshotFile = file;
      return this;
    }

    public Builder snapshotDebounce(Duration d) {
      this.snapshotDebounce = d;
      return this;
    }

    public Builder massRemovalGuard(int percent, Duration hold) {
      this.massRemovalPercent = percent;
      this.massRemovalHold = hold;
      return this;
    }

    /** Serve only records signed by these keys (see the record's {@code trustedKeys}). */
    public Builder trustedKeys(TrustedKeys keys) {
      this.trustedKeys = keys;
      return this;
    }

    /** How long expired signed records are still served after the cache becomes fresh (see the record). */
    public Builder expiryGrace(Duration grace) {
      this.expiryGrace = grace;
      return this;
    }

    /**
     * Run this cache's listeners on {@code executor}, for listeners that must block (see the record's
     * {@code listenerExecutor}); null: on the shared delivery pool.
     */
    public Builder listenerExecutor(Executor executor) {
      this.listenerExecutor = executor;
      return this;
    }

    /** Compare the set with etcd's keys about this often (see the record's {@code auditInterval}); 0: never. */
    public Builder auditInterval(Duration interval) {
      this.auditInterval = interval;
      return this;
    }

    public CacheConfig build() {
      return new CacheConfig(namespace, service, version, pageSize, progressInterval, progressTimeout, backoffBase,
          backoffCap, healthyReset, probeInterval, probeJitter, requestTimeout, snapshotFile, snapshotDebounce,
          massRemovalPercent, massRemovalHold, trustedKeys, expiryGrace, listenerExecutor, auditInterval);
    }
  }
}
