package dev.muster.chaos;

import dev.muster.cache.CacheConfig;
import dev.muster.cache.EndpointCache;
import dev.muster.etcd.EtcdConfig;
import dev.muster.etcd.EtcdRegistry;
import dev.muster.etcd.internal.NegativeControls;
import dev.muster.registry.Instance;
import dev.muster.registry.InstanceCodec;
import dev.muster.registry.RegistryLayout;
import dev.muster.sign.SigningKey;
import dev.muster.sign.TrustedKeys;
import dev.muster.testing.FaultProxy;
import java.net.URI;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Consumer;
import java.util.function.Supplier;
import java.util.stream.Collectors;

/**
 * Runs one {@link Schedule} against the shared etcd: its own namespace, its own fault proxies (one per member) and
 * its own {@link EtcdRegistry} through them, with two caches (the whole service, and version v1 alone) and up to
 * six registrations ({@link ScheduleRegistrations}). After every step, at a quiet point, {@link QuietPoint} checks
 * the invariants; the first that fails ends the schedule with a {@link Divergence}.
 *
 * <p>Keys: plain keys {@code k0..k19} (even ones in version v1, odd ones in v2, so an id has one key), lease keys
 * {@code l0..l9} (v1), registrations {@code r0..r5} (even in v1, odd in v2).
 *
 * <p>Not thread-safe: one thread runs a schedule from {@link #run()} to its end.
 */
final class ScheduleRun {
  static final String SERVICE = "svc";
  /**
   * The least a schedule's caches get to publish their first set: set-up, before any step, not an invariant. A
   * suite run on two loaded cores had the negative control's first sets (bound 5 s) take longer, and that schedule
   * "diverged" at step 0 before its faults.
   */
  static final Duration SETUP = Duration.ofSeconds(30);
  static final Instant REGISTERED_AT = Instant.parse("2026-12-01T00:00:00Z");

  private final Schedule schedule;
  private final String namespace;
  private final Oracle oracle;
  private final ClusterFaults faults;
  private final Tally tally;
  private final ChaosConfig config;
  private final RegistryLayout layout;
  private final String prefix;
  private final List<FaultProxy> proxies = new ArrayList<>();
  private final List<QuietPoint.Watched> watched = new ArrayList<>();
  private final ScheduleRegistrations registrations;
  private final List<String> outcomes = new ArrayList<>();
  /** Raw writes' signature sequence (with {@code --sign}): from the clock in microseconds, one more each time. */
  private final AtomicLong sequence = new AtomicLong(System.currentTimeMillis() * 1_000);
  private EtcdRegistry registry;
  private PublicationChecker checker;

  /** How one schedule ended. {@code failedStep} is -1 when every invariant held. */
  record Result(Schedule schedule, int stepsRun, int failedStep, String failure, List<String> outcomes,
      Duration took) {
    boolean diverged() {
      return failedStep >= 0;
    }
  }

  ScheduleRun(Schedule schedule, String namespace, Oracle oracle, ClusterFaults faults, Tally tally,
      ChaosConfig config) {
    this.schedule = schedule;
    this.namespace = namespace;
    this.oracle = oracle;
    this.faults = faults;
    this.tally = tally;
    this.config = config;
    this.layout = oracle.layout();
    this.prefix = layout.servicePrefix(namespace, SERVICE);
    this.registrations = new ScheduleRegistrations(namespace, oracle, tally, config, n -> plain(n, 1));
  }

  Result run(List<URI> memberUrls) {
    long start = System.nanoTime();
    int step = -1;
    try {
      open(memberUrls);
      QuietPoint quiet = new QuietPoint(oracle, prefix, watched, registrations.open(), checker, config.bound());
      for (step = 0; step < schedule.steps().size(); step++) {
        Step s = schedule.steps().get(step);
        outcomes.add(execute(s));
        tally.add("steps");
        quiet.check();
      }
      return new Result(schedule, schedule.steps().size(), -1, "", List.copyOf(outcomes), since(start));
    } catch (Divergence d) {
      tally.add("divergences");
      return new Result(schedule, step + 1, Math.max(step, 0), d.getMessage(), List.copyOf(outcomes), since(start));
    } catch (RuntimeException e) {
      tally.add("errors");
      return new Result(schedule, step + 1, Math.max(step, 0), "error: " + e, List.copyOf(outcomes), since(start));
    } finally {
      close();
    }
  }

  // ---- set-up ----------------------------------------------------------------------------------------

  private void open(List<URI> memberUrls) {
    checker = new PublicationChecker(oracle, tally, namespace);
    memberUrls.forEach(u -> proxies.add(FaultProxy.to(u)));
    String endpoints = proxies.stream().map(p -> p.uri().toString()).collect(Collectors.joining(","));
    registry = EtcdRegistry.connect(EtcdConfig.of(endpoints).withRequestTimeout(Duration.ofSeconds(3)));
    registrations.use(registry);
    watch("service", prefix, cacheConfig().build());
    watch("v1", layout.versionPrefix(namespace, SERVICE, "v1"), cacheConfig().version("v1").build());
    for (EndpointCache c : caches()) {
      Duration setup = config.bound().compareTo(SETUP) < 0 ? SETUP : config.bound();
      if (!c.awaitReady(setup)) {
        throw new Divergence("a cache did not publish its first set within " + setup.toSeconds() + " s");
      }
    }
  }

  private CacheConfig.Builder cacheConfig() {
    return CacheConfig.builder(SERVICE).namespace(namespace).pageSize(3)
        .progressInterval(Duration.ofSeconds(1)).progressTimeout(Duration.ofSeconds(1))
        .backoff(Duration.ofMillis(50), Duration.ofSeconds(1)).probe(Duration.ofMillis(100), Duration.ofMillis(200))
        .requestTimeout(Duration.ofSeconds(3))
        // the shortest audit interval, so a schedule of a few seconds audits (the negative control never does)
        .auditInterval(Duration.ofSeconds(1))
        .trustedKeys(config.signingKey() == null ? TrustedKeys.NONE
            : TrustedKeys.builder().namespace(namespace, config.signingKey().trustedKey()).build());
  }

  private void watch(String name, String watchedPrefix, CacheConfig cacheConfig) {
    PublicationLog log = new PublicationLog(name, p -> checker.check(name, watchedPrefix, p));
    watched.add(new QuietPoint.Watched(name, watchedPrefix, config.negativeControl()
        ? NegativeControls.watchFromNow(registry, cacheConfig, log) : registry.watch(cacheConfig, log), log));
  }

  private List<EndpointCache> caches() {
    return watched.stream().map(QuietPoint.Watched::cache).toList();
  }

  private void close() {
    registrations.closeAll();
    caches().forEach(c -> {
      tally.add("resyncs", c.resyncCount());
      tally.add("audits", c.auditCount());
      tally.add("audit differences", c.auditDifferenceCount());
    });
    registrations.tallyEvents();
    if (registry != null) {
      try {
        registry.close();
      } catch (RuntimeException e) {
        // closing is best effort; the schedule's keys are deleted below
      }
    }
    proxies.forEach(FaultProxy::close);
    if (checker != null) {
      checker.close();
    }
    try {
      oracle.deletePrefix(layout.namespacePrefix(namespace));
    } catch (RuntimeException e) {
      // leftovers in a namespace nobody watches again
    }
  }

  // ---- steps -----------------------------------------------------------------------------------------

  private String execute(Step s) {
    return switch (s.op()) {
      case WRITES -> {
        s.writes().forEach(this::write);
        yield "ok";
      }
      case TXN -> "revision " + txn(s.writes());
      case LEASE -> lease(s);
      case REGISTER -> registrations.register(s.target(), s.variant());
      case DEREGISTER -> registrations.deregister(s.target());
      case UPDATE -> registrations.update(s.target(), 1 + s.variant());
      case DUPLICATE -> registrations.duplicate(s.target());
      case CUT -> during(FaultProxy::cut, s, "cuts");
      case BLACKHOLE -> during(FaultProxy::blackhole, s, "blackholes");
      case LATENCY -> during(p -> p.latency(Duration.ofMillis(s.millis())), s, "latencies");
      case COMPACT -> {
        long rev = oracle.revision();
        tally.add(oracle.compact(rev) ? "compactions" : "compactions already done");
        yield "at " + rev;
      }
      case DELETE_COMPACT -> deleteCompact(s);
      case RESTART -> global(s, () -> faults.restart(name(), s.variant() % faults.members(),
          Duration.ofMillis(s.millis()), faults.members() > 1 ? () -> s.writes().forEach(this::write) : () -> { }),
          "restarts", faults.members() == 1);
      case LEADER_KILL -> global(s, () -> faults.killLeader(name(), Duration.ofMillis(s.millis()),
          () -> s.writes().forEach(this::write)), "leader kills", false);
      case MAJORITY_LOSS -> global(s, () -> faults.killMajority(name(), Duration.ofMillis(s.millis())),
          "majority losses", false);
      case ROLLING_UPGRADE -> global(s, () -> faults.rollingUpgrade(name(), () -> s.writes().forEach(this::write)),
          "rolling upgrades", false);
    };
  }

  private String name() {
    return "schedule " + schedule.index();
  }

  /** A fault on the shared cluster; writes made afterwards when the survivors could not take them. */
  private String global(Step s, Supplier<String> fault, String counter, boolean writesAfter) {
    String what = fault.get();
    boolean joined = what.startsWith("joined");
    tally.add(joined ? "cluster faults joined" : counter);
    if (writesAfter || joined) {
      s.writes().forEach(this::write);
    }
    return what;
  }

  private String during(Consumer<FaultProxy> fault, Step s, String counter) {
    proxies.forEach(fault);
    tally.add(counter);
    try {
      if (s.op() != Op.LATENCY) {
        Oracle.sleep(Duration.ofMillis(s.millis() / 2));
      }
      s.writes().forEach(this::write);
      if (s.op() != Op.LATENCY) {
        Oracle.sleep(Duration.ofMillis(s.millis() - s.millis() / 2));
      }
    } finally {
      proxies.forEach(FaultProxy::pass);
    }
    return "ok";
  }

  /** The shape of etcd 18089: the caches hold key d; while cut, d is deleted at R and etcd compacts at R. */
  private String deleteCompact(Step s) {
    String d = key(s.target());
    String next = key((s.target() + 1) % Step.KEYS);
    if (oracle.get(d).isEmpty()) {
      long rev = write(new Step.Write(false, s.target(), 1));
      awaitCachesAt(d, rev); // the caches must hold d before it is deleted, or there is nothing to lose
    }
    proxies.forEach(FaultProxy::cut);
    try {
      awaitCachesStale();
      long deleted = switch (s.variant()) {
        case 0 -> oracle.delete(d);
        case 1 -> {
          long r = oracle.delete(d);
          write(new Step.Write(false, (s.target() + 1) % Step.KEYS, 7));
          yield r;
        }
        default -> {
          Map<String, byte[]> txn = new LinkedHashMap<>();
          txn.put(d, null);
          txn.put(next, value(next, 0, plain((s.target() + 1) % Step.KEYS, 7)));
          yield oracle.txn(txn);
        }
      };
      boolean compacted = oracle.compact(deleted);
      tally.add(compacted ? "18089 shapes" : "18089 shapes (compacted above by another schedule)");
      return "deleted at " + deleted + (compacted ? ", compacted there" : ", already compacted above");
    } finally {
      proxies.forEach(FaultProxy::pass);
    }
  }

  /** Waits until every cache that watches {@code key} has applied {@code revision}. */
  private void awaitCachesAt(String key, long revision) {
    long deadline = System.nanoTime() + config.bound().toNanos();
    while (watched.stream().anyMatch(w -> key.startsWith(w.prefix()) && w.cache().revision() < revision)
        && System.nanoTime() < deadline) {
      Oracle.sleep(Duration.ofMillis(20));
    }
  }

  private void awaitCachesStale() {
    long deadline = System.nanoTime() + Duration.ofSeconds(10).toNanos();
    while (caches().stream().anyMatch(c -> !c.isStale()) && System.nanoTime() < deadline) {
      Oracle.sleep(Duration.ofMillis(10));
    }
  }

  // ---- writes ----------------------------------------------------------------------------------------

  /** The etcd key of plain key {@code k<n>}. */
  String key(int n) {
    return layout.instanceKey(plain(n, 1));
  }

  private Instance plain(int n, int weight) {
    return Instance.of(SERVICE, "10.1." + n + ".1", 8000 + n).namespace(namespace).version(n % 2 == 0 ? "v1" : "v2")
        .id("k" + n).weight(weight).registeredAt(REGISTERED_AT);
  }

  /**
   * What a raw write puts under {@code key} on {@code lease}: the instance's value, signed by the run's key when the
   * run signs ({@code --sign}: the caches trust it), with a sequence that only grows, as a registrar's does.
   */
  private byte[] value(String key, long lease, Instance instance) {
    SigningKey by = config.signingKey();
    return by == null ? InstanceCodec.encode(instance) : InstanceCodec.encodeSigned(instance, key, lease,
        sequence.incrementAndGet(), Instant.now().plus(Duration.ofMinutes(10)), by, false);
  }

  private long write(Step.Write w) {
    String key = key(w.key());
    return w.delete() ? oracle.delete(key) : oracle.put(key, value(key, 0, plain(w.key(), w.weight())));
  }

  private long txn(List<Step.Write> writes) {
    Map<String, byte[]> changes = new LinkedHashMap<>();
    for (Step.Write w : writes) {
      String key = key(w.key());
      changes.put(key, w.delete() ? null : value(key, 0, plain(w.key(), w.weight())));
    }
    return oracle.txn(changes);
  }

  private String lease(Step s) {
    Duration ttl = Duration.ofSeconds(2 + s.variant());
    long lease = oracle.grant(ttl);
    for (int i = 0; i < s.writes().size(); i++) {
      int n = (s.target() + i) % Step.LEASE_KEYS;
      Instance inst = Instance.of(SERVICE, "10.2." + n + ".1", 8500 + n).namespace(namespace).version("v1")
          .id("l" + n).weight(s.writes().get(i).weight()).registeredAt(REGISTERED_AT);
      String key = layout.instanceKey(inst);
      oracle.put(key, value(key, lease, inst), lease);
    }
    tally.add("leases left to expire");
    return "lease " + Long.toHexString(lease);
  }

  private static Duration since(long startNanos) {
    return Duration.ofNanos(System.nanoTime() - startNanos);
  }
}
