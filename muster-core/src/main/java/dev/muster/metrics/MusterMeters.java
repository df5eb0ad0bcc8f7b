package dev.muster.metrics;

import dev.muster.balance.Balancer;
import dev.muster.balance.EndpointState;
import dev.muster.cache.EndpointCache;
import dev.muster.client.MusterClient;
import dev.muster.registry.Registration;
import dev.muster.registry.RegistrationState;
import io.micrometer.core.instrument.FunctionCounter;
import io.micrometer.core.instrument.FunctionTimer;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.Meter;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Tags;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.concurrent.TimeUnit;
import java.util.function.Predicate;
import java.util.function.ToDoubleFunction;

/**
 * Discovery's own meters, beside the calls' ({@code muster.call.*}): every cache, balancer and registration as
 * Micrometer gauges and function counters. Each meter reads, when it is scraped, a count the component keeps anyway
 * (a volatile field, a counter): binding adds no work and no allocation to a pick or to applying an event. Names
 * and tags follow Micrometer's conventions (dot-separated, lower case, base units); the Prometheus registry writes
 * them as {@code muster_cache_stale} and so on.
 *
 * <pre>{@code
 * MusterMeters.Binding b = MusterMeters.client(meterRegistry, orders); // its cache, balancer, probes, retry budget
 * ...
 * b.close(); // removes them again
 * }</pre>
 *
 * <p>Thread-safe: bind and unbind from any thread. The meters hold their component strongly until unbound.
 */
public final class MusterMeters {
  private MusterMeters() {}

  /** The meters bound by one call; {@link #close()} removes them from the registry. */
  public interface Binding extends AutoCloseable {
    /** The meters bound (for tests and for an application's own bookkeeping). */
    List<Meter> meters();

    @Override
    void close();
  }

  /**
   * One cache: {@code muster.cache.endpoints}, {@code muster.cache.stale} (0/1), {@code muster.cache.stale.seconds},
   * {@code muster.cache.revision}, {@code muster.cache.listener.backlog}, and the counters {@code
   * muster.cache.changes} (sets published), {@code muster.cache.resyncs}, {@code muster.cache.snapshot.loads},
   * {@code muster.cache.audits}, {@code muster.cache.audit.differences}, {@code muster.cache.records.rejected}
   * ({@code reason} = {@code unverified}, {@code malformed}); tagged {@code tags} (say {@code namespace},
   * {@code service}).
   */
  public static Binding cache(MeterRegistry registry, EndpointCache cache, Tags tags) {
    Bindings b = new Bindings(registry);
    b.gauge("muster.cache.endpoints", cache, c -> c.current().size(), tags, "instances in the endpoint set");
    b.gauge("muster.cache.stale", cache, c -> c.isStale() ? 1 : 0, tags,
        "1 while the endpoint set may be out of date (etcd unreachable, watch broken)");
    b.gauge("muster.cache.stale.seconds", cache, c -> c.staleSince()
        .map(since -> Duration.between(since, Instant.now()).toMillis() / 1000.0).orElse(0.0), tags,
        "how long the endpoint set has been stale, 0 while fresh");
    b.gauge("muster.cache.revision", cache, EndpointCache::revision, tags, "the etcd revision the set is at");
    b.gauge("muster.cache.listener.backlog", cache, EndpointCache::listenerBacklog, tags,
        "publications queued for the listeners and not yet started");
    b.counter("muster.cache.changes", cache, EndpointCache::changeCount, tags, "sets published");
    b.counter("muster.cache.resyncs", cache, EndpointCache::resyncCount, tags, "full resyncs after the first set");
    b.counter("muster.cache.snapshot.loads", cache, EndpointCache::snapshotLoadCount, tags,
        "sets loaded from the disk snapshot");
    b.counter("muster.cache.audits", cache, EndpointCache::auditCount, tags, "audits of the set against etcd");
    b.counter("muster.cache.audit.differences", cache, EndpointCache::auditDifferenceCount, tags,
        "audits that found the set different from etcd (repaired by a resync)");
    b.counter("muster.cache.records.rejected", cache, EndpointCache::unverifiedCount, tags.and("reason", "unverified"),
        "records excluded: unverified (forged, unsigned) or malformed");
    b.counter("muster.cache.records.rejected", cache, EndpointCache::malformedCount, tags.and("reason", "malformed"),
        "records excluded: unverified (forged, unsigned) or malformed");
    return b;
  }

  /**
   * One balancer: {@code muster.balancer.endpoints} ({@code state} = {@code available}, {@code ejected}, {@code
   * probe_down}, {@code not_up}: STARTING or DRAINING), {@code muster.balancer.panic} (0/1), {@code
   * muster.balancer.stale.refusing} (0/1: FAIL_CLOSED past maxStale), {@code muster.balancer.over.max.stale} (0/1) and
   * the counter {@code muster.balancer.ejections}.
   */
  public static Binding balancer(MeterRegistry registry, Balancer balancer, Tags tags) {
    Bindings b = new Bindings(registry);
    b.gauge("muster.balancer.endpoints", balancer, x -> count(x, EndpointState::isAvailable),
        tags.and("state", "available"), "endpoints by state");
    b.gauge("muster.balancer.endpoints", balancer, x -> count(x, EndpointState::isEjected),
        tags.and("state", "ejected"), "endpoints by state");
    b.gauge("muster.balancer.endpoints", balancer, x -> count(x, EndpointState::isProbeDown),
        tags.and("state", "probe_down"), "endpoints by state");
    b.gauge("muster.balancer.endpoints", balancer, x -> count(x, e -> !e.instance().state().takesNewCalls()),
        tags.and("state", "not_up"), "endpoints by state");
    b.gauge("muster.balancer.panic", balancer, x -> x.isPanicking() ? 1 : 0, tags,
        "1 while picks go across endpoints local judgement excludes (panic routing)");
    b.gauge("muster.balancer.over.max.stale", balancer, x -> x.isOverMaxStale() ? 1 : 0, tags,
        "1 while the registry has been unreachable past maxStale (the stale policy applies)");
    b.gauge("muster.balancer.stale.refusing", balancer, x -> x.staleRefusal().isPresent() ? 1 : 0, tags,
        "1 while new calls are refused (FAIL_CLOSED past maxStale)");
    b.counter("muster.balancer.ejections", balancer, x -> x.detector().ejections(), tags, "ejections since start");
    return b;
  }

  /**
   * A client's cache, balancer, probes ({@code muster.probe.down}, {@code muster.probe.results} by {@code result})
   * and retry budget ({@code muster.retry.budget.refused}), tagged {@code service}.
   */
  public static Binding client(MeterRegistry registry, MusterClient client) {
    Tags tags = Tags.of("service", client.service());
    Bindings b = new Bindings(registry);
    b.add(cache(registry, client.cache(), tags));
    b.add(balancer(registry, client.balancer(), tags));
    client.prober().ifPresent(p -> {
      b.gauge("muster.probe.down", p, x -> x.downCount(), tags, "endpoints active probes judge down now");
      b.counter("muster.probe.results", p, x -> x.passes(), tags.and("result", "pass"), "probes by result");
      b.counter("muster.probe.results", p, x -> x.failures(), tags.and("result", "fail"), "probes by result");
    });
    b.counter("muster.retry.budget.refused", client, c -> c.budget().refused(), tags, "retries the budget refused");
    return b;
  }

  /**
   * One registration, tagged {@code service} and {@code instance}: {@code muster.registration.state} (one gauge per
   * state, 1 for the current one), {@code muster.registration.keepalive} (a function timer: keepalives etcd
   * answered and their total round trip), and the counters {@code muster.registration.lease.losses}, {@code
   * muster.registration.reregistrations}, {@code muster.registration.drains}.
   */
  public static Binding registration(MeterRegistry registry, Registration registration) {
    Tags tags = Tags.of("service", registration.instance().service(), "instance", registration.instance().id());
    Bindings b = new Bindings(registry);
    for (RegistrationState s : RegistrationState.values()) {
      b.gauge("muster.registration.state", registration, r -> r.state() == s ? 1 : 0,
          tags.and("state", s.name().toLowerCase(java.util.Locale.ROOT)), "1 for the registration's current state");
    }
    b.meters.add(FunctionTimer.builder("muster.registration.keepalive", registration, r -> r.stats().keepalives(),
        r -> r.stats().keepaliveTime().toNanos(), TimeUnit.NANOSECONDS).tags(tags)
        .description("keepalives etcd answered, and their round trip").register(registry));
    b.counter("muster.registration.lease.losses", registration, r -> r.stats().leaseLosses(), tags,
        "times etcd said the lease was gone");
    b.counter("muster.registration.reregistrations", registration, r -> r.stats().reregistrations(), tags,
        "registrations under a new lease after a lost one");
    b.counter("muster.registration.drains", registration, r -> r.stats().drains(), tags, "drains begun");
    return b;
  }

  /** A binding of meters registered elsewhere (an adapter's own), so that one {@code close()} removes them. */
  public static Binding of(MeterRegistry registry, List<Meter> meters) {
    Bindings b = new Bindings(registry);
    b.meters.addAll(meters);
    return b;
  }

  private static double count(Balancer balancer, Predicate<EndpointState> which) {
    int n = 0;
    for (EndpointState e : balancer.endpoints()) {
      if (which.test(e)) {
        n++;
      }
    }
    return n;
  }

  /** The meters of one binding, and the registry to remove them from. */
  private static final class Bindings implements Binding {
    private final MeterRegistry registry;
    private final List<Meter> meters = new ArrayList<>();

    Bindings(MeterRegistry registry) {
      this.registry = Objects.requireNonNull(registry, "registry");
    }

    <T> void gauge(String name, T obj, ToDoubleFunction<T> f, Tags tags, String description) {
      meters.add(Gauge.builder(name, obj, f).tags(tags).description(description).strongReference(true)
          .register(registry));
    }

    <T> void counter(String name, T obj, ToDoubleFunction<T> f, Tags tags, String description) {
      meters.add(FunctionCounter.builder(name, obj, f).tags(tags).description(description).register(registry));
    }

    void add(Binding other) {
      meters.addAll(other.meters());
    }

    @Override
    public synchronized List<Meter> meters() {
      return List.copyOf(meters);
    }

    @Override
    public synchronized void close() {
      meters.forEach(registry::remove);
      meters.clear();
    }
  }
}
