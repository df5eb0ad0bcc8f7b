package dev.muster.metrics;

import static org.assertj.core.api.Assertions.assertThat;

import dev.muster.balance.EndpointState;
import dev.muster.cache.CacheConfig;
import dev.muster.client.ManualCache;
import dev.muster.client.MusterClient;
import dev.muster.registry.Instance;
import dev.muster.registry.InstanceState;
import dev.muster.registry.Registration;
import dev.muster.registry.RegistrationState;
import dev.muster.registry.RegistrationStats;
import io.micrometer.core.instrument.FunctionTimer;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.lang.management.ManagementFactory;
import java.time.Duration;
import java.time.Instant;
import java.util.concurrent.CompletableFuture;
import java.util.function.UnaryOperator;
import org.junit.jupiter.api.Test;

/**
 * Discovery's meters read what the components count: a client's cache and balancer, a registration; bound and
 * unbound; and binding them adds no allocation to a pick.
 */
class MusterMetersTest {
  private final MeterRegistry meters = new SimpleMeterRegistry();

  private static Instance instance(String id) {
    return Instance.of("orders", "10.0.0.7", 8080).id(id).registeredAt(null);
  }

  private double gauge(String name, String... tags) {
    return meters.get(name).tags(tags).gauge().value();
  }

  private double counter(String name, String... tags) {
    return meters.get(name).tags(tags).functionCounter().count();
  }

  @Test
  void aClientBindsItsCacheAndBalancerAndUnbindsThemAtClose() {
    ManualCache cache = new ManualCache(CacheConfig.builder("orders").build());
    cache.publish(instance("a"), instance("b").state(InstanceState.DRAINING));
    MusterClient client = MusterClient.builder(cache).service("orders").meters(meters).build();

    assertThat(gauge("muster.cache.endpoints", "service", "orders")).isEqualTo(2);
    assertThat(gauge("muster.cache.stale", "service", "orders")).isZero();
    assertThat(gauge("muster.balancer.endpoints", "service", "orders", "state", "available")).isEqualTo(1);
    assertThat(gauge("muster.balancer.endpoints", "service", "orders", "state", "not_up")).isEqualTo(1);
    assertThat(gauge("muster.balancer.panic", "service", "orders")).isZero();
    assertThat(counter("muster.cache.records.rejected", "service", "orders", "reason", "unverified")).isZero();

    cache.stale(Instant.now().minusSeconds(5));
    assertThat(gauge("muster.cache.stale", "service", "orders")).isEqualTo(1);
    assertThat(gauge("muster.cache.stale.seconds", "service", "orders")).isGreaterThanOrEqualTo(5);

    client.close();
    assertThat(meters.find("muster.cache.endpoints").meters()).as("unbound at close").isEmpty();
    assertThat(meters.find("muster.balancer.endpoints").meters()).isEmpty();
  }

  @Test
  void aRegistrationsStateAndCountsAreMeters() {
    StubRegistration r = new StubRegistration();
    MusterMeters.Binding b = MusterMeters.registration(meters, r);

    assertThat(gauge("muster.registration.state", "service", "orders", "instance", "a", "state", "active"))
        .isEqualTo(1);
    assertThat(gauge("muster.registration.state", "service", "orders", "instance", "a", "state", "draining"))
        .isZero();
    r.state = RegistrationState.DRAINING;
    r.stats = new RegistrationStats(4, Duration.ofMillis(8), 1, 1, 1);
    assertThat(gauge("muster.registration.state", "service", "orders", "instance", "a", "state", "draining"))
        .isEqualTo(1);
    FunctionTimer keepalive = meters.get("muster.registration.keepalive").functionTimer();
    assertThat(keepalive.count()).isEqualTo(4);
    assertThat(keepalive.mean(java.util.concurrent.TimeUnit.MILLISECONDS)).isEqualTo(2.0);
    assertThat(counter("muster.registration.lease.losses", "instance", "a")).isEqualTo(1);
    assertThat(counter("muster.registration.drains", "instance", "a")).isEqualTo(1);

    b.close();
    assertThat(meters.getMeters()).isEmpty();
  }

  @Test
  void withEveryMeterBoundAPickAllocatesNothing() {
    ManualCache cache = new ManualCache(CacheConfig.builder("orders").build());
    cache.publish(instance("a"), instance("b"), instance("c"));
    try (MusterClient client = MusterClient.builder(cache).service("orders").meters(meters).build()) {
      com.sun.management.ThreadMXBean threads =
          (com.sun.management.ThreadMXBean) ManagementFactory.getThreadMXBean();
      long id = Thread.currentThread().getId();
      for (int i = 0; i < 10_000; i++) { // warm up
        blackhole(client.balancer().pick());
      }
      meters.getMeters().forEach(m -> m.measure().forEach(x -> { })); // a scrape meanwhile changes nothing either
      long before = threads.getThreadAllocatedBytes(id);
      for (int i = 0; i < 100_000; i++) {
        blackhole(client.balancer().pick());
      }
      long allocated = threads.getThreadAllocatedBytes(id) - before;

      assertThat(allocated).as("100,000 picks with every meter bound").isLessThan(4_096);
    }
  }

  private static volatile EndpointState sink;

  private static void blackhole(EndpointState e) {
    sink = e;
  }

  /** A registration whose state and counts the test sets. */
  private static final class StubRegistration implements Registration {
    volatile RegistrationState state = RegistrationState.ACTIVE;
    volatile RegistrationStats stats = RegistrationStats.NONE;

    @Override
    public Instance instance() {
      return MusterMetersTest.instance("a");
    }

    @Override
    public long leaseId() {
      return 1;
    }

    @Override
    public RegistrationState state() {
      return state;
    }

    @Override
    public RegistrationStats stats() {
      return stats;
    }

    @Override
    public CompletableFuture<Instance> update(UnaryOperator<Instance> change) {
      throw new UnsupportedOperationException();
    }

    @Override
    public CompletableFuture<Void> drain() {
      throw new UnsupportedOperationException();
    }

    @Override
    public CompletableFuture<Void> closeAsync() {
      throw new UnsupportedOperationException();
    }

    @Override
    public void close() {
    }
  }
}
