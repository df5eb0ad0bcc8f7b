package dev.muster.etcd;

import static dev.muster.registry.RegistrationEvent.Type.LEASE_LOST;
import static dev.muster.registry.RegistrationEvent.Type.REREGISTERED;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import dev.muster.DuplicateInstanceException;
import dev.muster.registry.Instance;
import dev.muster.registry.RegistrarConfig;
import dev.muster.registry.Registration;
import dev.muster.testing.EtcdCluster;
import io.etcd.jetcd.KeyValue;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.RegisterExtension;

/** {@code RegistrarConfig.sharedLease}: a registry's registrations on one lease, on real etcd (both lines). */
@Timeout(value = 2, unit = TimeUnit.MINUTES)
@Tag("etcd-versions")
class SharedLeaseIT {
  @RegisterExtension
  static EtcdCluster etcd = EtcdCluster.builder().members(1).build();

  private static final RegistrarConfig SHARED = RegistrarConfig.builder()
      .ttl(Duration.ofSeconds(3)).keepaliveInterval(Duration.ofSeconds(1)).drain(Duration.ZERO)
      .startTimeout(Duration.ofSeconds(10)).shutdownHook(false).sharedLease(true).build();
  private static final int N = 20;

  private EtcdRegistry registry;
  private Etcd check;
  private String service;

  @BeforeEach
  void connect() {
    registry = EtcdRegistry.connect(EtcdConfig.of(etcd.endpointsString()));
    check = new Etcd(etcd.endpoints());
    service = "svc-" + UUID.randomUUID().toString().substring(0, 8);
  }

  @AfterEach
  void disconnect() {
    registry.close();
    check.close();
  }

  private String keyOf(Instance i) {
    return registry.config().layout().instanceKey(i);
  }

  private Instance instance(int i) {
    return Instance.of(service, "10.0.0." + (i + 1), 8080).id("i" + i);
  }

  /** N registrations started together, as a burst: all on one lease, granted once. */
  private List<Registration> registerAtOnce(List<EventRecorder> events) throws Exception {
    ExecutorService starters = Executors.newFixedThreadPool(N);
    try {
      List<Future<Registration>> started = new ArrayList<>();
      for (int i = 0; i < N; i++) {
        EventRecorder e = new EventRecorder();
        events.add(e);
        Instance instance = instance(i);
        started.add(starters.submit(() -> registry.register(instance, SHARED, e)));
      }
      List<Registration> out = new ArrayList<>();
      for (Future<Registration> f : started) {
        out.add(f.get(30, TimeUnit.SECONDS));
      }
      return out;
    } finally {
      starters.shutdownNow();
    }
  }

  private List<Long> leasesOfKeys() {
    List<Long> leases = new ArrayList<>();
    for (int i = 0; i < N; i++) {
      leases.add(check.get(keyOf(instance(i))).map(KeyValue::getLease).orElse(0L));
    }
    return leases;
  }

  @Test
  void aBurstGoesOnOneLeaseRenewedAboutTwicePerIntervalAndEachCloseTakesOnlyItsKey() throws Exception {
    List<EventRecorder> events = new CopyOnWriteArrayList<>();
    List<Registration> regs = registerAtOnce(events);
    long lease = regs.get(0).leaseId();

    assertThat(regs).allSatisfy(r -> assertThat(r.leaseId()).isEqualTo(lease));
    assertThat(leasesOfKeys()).containsOnly(lease);
    assertThat(registry.connectionStats()).containsEntry("shared_lease.grants", 1L)
        .containsEntry("shared_lease.live", 1L);

    Thread.sleep(4_000); // more than the TTL: only the keepalives keep the keys
    assertThat(leasesOfKeys()).containsOnly(lease);
    long roundTrips = registry.connectionStats().get("shared_lease.keepalive_round_trips");
    long coalesced = registry.connectionStats().get("shared_lease.keepalives_coalesced");
    System.out.printf("%d registrations, 4 s of 1 s keepalives: %d round trips, %d answered without one%n", N,
        roundTrips, coalesced);
    assertThat(coalesced).as("keepalives answered from the shared lease's last answer").isPositive();
    assertThat(roundTrips).as("round trips, against one per registration per interval").isLessThan(4L * N / 2);

    regs.get(0).close();
    assertThat(check.get(keyOf(instance(0)))).isEmpty();
    assertThat(check.get(keyOf(instance(1)))).isPresent();
    assertThat(check.leases()).contains(lease);

    for (Registration r : regs.subList(1, N)) {
      r.close();
    }
    assertThat(leasesOfKeys()).containsOnly(0L);
    assertThat(check.leases()).doesNotContain(lease);
    assertThat(registry.connectionStats()).containsEntry("shared_lease.live", 0L);
  }

  @Test
  void theSameIdTwiceOnOneRegistryIsRefusedAndTheFirstKeepsItsKey() {
    Registration first = registry.register(instance(0), SHARED, new EventRecorder());

    assertThatThrownBy(() -> registry.register(instance(0), SHARED, new EventRecorder()))
        .isInstanceOf(DuplicateInstanceException.class);

    assertThat(check.get(keyOf(instance(0)))).map(KeyValue::getLease).contains(first.leaseId());
    Registration other = registry.register(instance(1), SHARED, new EventRecorder());
    assertThat(other.leaseId()).isEqualTo(first.leaseId());
    first.close();
    other.close();
    assertThat(check.leases()).doesNotContain(first.leaseId());
  }

  @Test
  void aLostSharedLeaseTakesEveryRegistrationDownAndAllComeBackOnOneNewLease() throws Exception {
    List<EventRecorder> events = new CopyOnWriteArrayList<>();
    List<Registration> regs = registerAtOnce(events);
    long lease = regs.get(0).leaseId();

    check.revoke(lease);

    for (EventRecorder e : events) {
      e.awaitEvent(LEASE_LOST, Duration.ofSeconds(10));
      e.awaitEvent(REREGISTERED, Duration.ofSeconds(10));
    }
    await().atMost(Duration.ofSeconds(10)).until(() -> !leasesOfKeys().contains(0L));
    long renewed = regs.get(0).leaseId();
    assertThat(renewed).isNotEqualTo(lease);
    assertThat(regs).allSatisfy(r -> assertThat(r.leaseId()).isEqualTo(renewed));
    assertThat(leasesOfKeys()).containsOnly(renewed);
    assertThat(registry.connectionStats()).containsEntry("shared_lease.grants", 2L);
    for (Registration r : regs) {
      r.close();
    }
    assertThat(check.leases()).doesNotContain(renewed);
  }
}
