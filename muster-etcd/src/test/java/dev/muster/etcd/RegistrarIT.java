package dev.muster.etcd;

import static dev.muster.registry.RegistrationEvent.Type.DRAINING;
import static dev.muster.registry.RegistrationEvent.Type.LEASE_LOST;
import static dev.muster.registry.RegistrationEvent.Type.REGISTERED;
import static dev.muster.registry.RegistrationEvent.Type.REREGISTERED;
import static dev.muster.registry.RegistrationEvent.Type.REVOKED;
import static dev.muster.registry.RegistrationEvent.Type.UPDATED;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import dev.muster.DuplicateInstanceException;
import dev.muster.RegistryUnavailableException;
import dev.muster.etcd.internal.NegativeControls;
import dev.muster.registry.Instance;
import dev.muster.registry.InstanceCodec;
import dev.muster.registry.InstanceState;
import dev.muster.registry.RegistrarConfig;
import dev.muster.registry.Registration;
import dev.muster.registry.RegistrationEvent;
import dev.muster.registry.RegistrationState;
import dev.muster.registry.internal.RegistrarControls;
import dev.muster.testing.EtcdCluster;
import dev.muster.testing.internal.FreePorts;
import io.etcd.jetcd.KeyValue;
import io.etcd.jetcd.Watch;
import io.etcd.jetcd.options.WatchOption;
import io.etcd.jetcd.watch.WatchEvent;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.RegisterExtension;

@Timeout(value = 2, unit = TimeUnit.MINUTES)
class RegistrarIT {
  @RegisterExtension
  static EtcdCluster etcd = EtcdCluster.builder().members(1).build();

  private static final RegistrarConfig FAST = RegistrarConfig.builder()
      .ttl(Duration.ofSeconds(3)).keepaliveInterval(Duration.ofSeconds(1)).drain(Duration.ZERO)
      .startTimeout(Duration.ofSeconds(5)).shutdownHook(false).build();

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

  @Test
  void registeringPutsTheKeyUnderItsLeaseAndTheValueRoundTrips() {
    EventRecorder events = new EventRecorder();
    Instance instance = Instance.of(service, "10.0.0.7", 8080).zone("a").weight(50).meta("build", "42");
    Registration r = registry.register(instance, FAST, events);

    KeyValue kv = check.get(keyOf(instance)).orElseThrow();
    assertThat(kv.getLease()).isEqualTo(r.leaseId()).isNotZero();
    assertThat(InstanceCodec.decode(instance.key(), kv.getValue().getBytes())).isEqualTo(instance);
    assertThat(r.state()).isEqualTo(RegistrationState.ACTIVE);
    RegistrationEvent registered = events.events().get(0);
    assertThat(registered.type()).isEqualTo(REGISTERED);
    assertThat(registered.revision()).isEqualTo(kv.getModRevision());
    assertThat(registered.lease()).isEqualTo(r.leaseId());
  }

  @Test
  void anUpdateOfWeightAndStateIsVisibleOnTheSameLease() throws Exception {
    EventRecorder events = new EventRecorder();
    Instance instance = Instance.of(service, "10.0.0.7", 8080);
    Registration r = registry.register(instance, FAST, events);
    long lease = r.leaseId();

    r.update(i -> i.weight(7).state(InstanceState.DRAINING)).get(10, TimeUnit.SECONDS);

    KeyValue kv = check.get(keyOf(instance)).orElseThrow();
    Instance stored = InstanceCodec.decode(instance.key(), kv.getValue().getBytes());
    assertThat(stored.weight()).isEqualTo(7);
    assertThat(stored.state()).isEqualTo(InstanceState.DRAINING);
    assertThat(kv.getLease()).isEqualTo(lease);
    assertThat(events.types()).contains(UPDATED);
  }

  @Test
  void anUpdateThatChangesTheIdentityIsRefused() {
    Registration r = registry.register(Instance.of(service, "10.0.0.7", 8080), FAST, null);
    assertThatThrownBy(() -> r.update(i -> i.id("someone-else")).get(10, TimeUnit.SECONDS))
        .hasCauseInstanceOf(dev.muster.InvalidInputException.class)
        .hasMessageContaining("not namespace, service, version or id");
  }

  @Test
  void theSameIdTwiceIsRefusedNamingTheHolderAndTheFirstIsUntouched() {
    Instance first = Instance.of(service, "10.0.0.7", 8080).id("dup-1");
    Registration r = registry.register(first, FAST, null);
    String before = check.value(keyOf(first));
    await().atMost(Duration.ofSeconds(10)).until(() -> !registry.leasesAhead().isEmpty());
    long ahead = registry.leasesAhead().get(0); // the refused registration takes it
    List<Long> leasesBefore = check.leases();

    Instance second = Instance.of(service, "10.0.0.8", 9090).id("dup-1");
    assertThatThrownBy(() -> registry.register(second, FAST, null))
        .isInstanceOfSatisfying(DuplicateInstanceException.class, e -> {
          assertThat(e.key()).isEqualTo(keyOf(first));
          assertThat(e.holderLease()).isEqualTo(r.leaseId());
          assertThat(e.holderTtl()).isPositive().isLessThanOrEqualTo(Duration.ofSeconds(3));
          assertThat(e.getMessage()).contains(keyOf(first)).contains(Long.toHexString(r.leaseId()));
        });

    assertThat(check.value(keyOf(first))).isEqualTo(before);
    assertThat(check.get(keyOf(first)).orElseThrow().getLease()).isEqualTo(r.leaseId());
    assertThat(check.leases()).as("the refused registration's own lease is revoked").doesNotContain(ahead);
    await().atMost(Duration.ofSeconds(10)).untilAsserted(() -> assertThat(check.leases())
        .as("the leases before, less the one taken, plus the next one granted ahead")
        .containsExactlyInAnyOrderElementsOf(replaced(leasesBefore, ahead, registry.leasesAhead())));
  }

  private static List<Long> replaced(List<Long> leases, long taken, List<Long> added) {
    List<Long> all = new java.util.ArrayList<>(leases);
    all.remove(Long.valueOf(taken));
    all.addAll(added);
    return all;
  }

  @Test
  void aSecondRegistrationIsOnePutUnderTheLeaseGrantedAheadAndClosingTheRegistryRevokesTheNextOne() {
    assertThat(registry.leasesAhead()).as("nothing is granted before a first registration").isEmpty();
    Registration first = registry.register(Instance.of(service, "10.0.0.7", 8080), FAST, null);
    await().atMost(Duration.ofSeconds(10)).until(() -> registry.leasesAhead().size() == 1);
    long ahead = registry.leasesAhead().get(0);
    assertThat(ahead).isNotEqualTo(first.leaseId());
    assertThat(check.get(keyOf(first.instance())).orElseThrow().getLease()).isEqualTo(first.leaseId());

    Registration second = registry.register(Instance.of(service, "10.0.0.8", 8080), FAST, null);

    assertThat(second.leaseId()).as("the second registration took the lease granted ahead").isEqualTo(ahead);
    assertThat(check.get(keyOf(second.instance())).orElseThrow().getLease()).isEqualTo(ahead);
    await().atMost(Duration.ofSeconds(10)).until(() -> registry.leasesAhead().size() == 1);
    long next = registry.leasesAhead().get(0);
    assertThat(next).isNotIn(first.leaseId(), ahead);
    assertThat(check.leases()).contains(next);

    registry.close();

    assertThat(check.leases()).as("closing the registry revokes the lease granted ahead")
        .doesNotContain(next, first.leaseId(), ahead);
  }

  @Test
  void withLeaseAheadOffNoLeaseIsGrantedAhead() {
    RegistrarConfig own = FAST.toBuilder().leaseAhead(false).build();
    Registration r = registry.register(Instance.of(service, "10.0.0.7", 8080), own, null);
    registry.register(Instance.of(service, "10.0.0.8", 8080), own, null);

    await().during(Duration.ofMillis(500)).atMost(Duration.ofSeconds(2))
        .until(() -> registry.leasesAhead().isEmpty());
    assertThat(check.get(keyOf(r.instance())).orElseThrow().getLease()).isEqualTo(r.leaseId());
  }

  @Test
  void aLeaseRevokedBehindItsBackIsNoticedAndTheInstanceReregistersUnderANewLease() {
    EventRecorder events = new EventRecorder();
    Instance instance = Instance.of(service, "10.0.0.7", 8080);
    Registration r = registry.register(instance, FAST, events);
    long first = r.leaseId();

    check.revoke(first);
    assertThat(check.get(keyOf(instance))).isEmpty();

    events.awaitEvent(REREGISTERED, Duration.ofSeconds(10));
    assertThat(events.types()).containsSubsequence(REGISTERED, LEASE_LOST, REREGISTERED);
    KeyValue kv = check.get(keyOf(instance)).orElseThrow();
    assertThat(kv.getLease()).isEqualTo(r.leaseId()).isNotEqualTo(first);
    assertThat(r.state()).isEqualTo(RegistrationState.ACTIVE);
  }

  @Test
  void withReregistrationOffAProviderWhoseLeaseIsGoneStaysInvisible() {
    EventRecorder events = new EventRecorder();
    Instance instance = Instance.of(service, "10.0.0.7", 8080);
    Registration r = NegativeControls.register(registry, instance, FAST,
        RegistrarControls.PRODUCTION.withReregister(false), events);
    long lease = r.leaseId();

    check.revoke(lease);
    events.awaitEvent(LEASE_LOST, Duration.ofSeconds(10));
    await().during(Duration.ofSeconds(2)).atMost(Duration.ofSeconds(5))
        .until(() -> check.get(keyOf(instance)).isEmpty());
    assertThat(r.leaseId()).isEqualTo(lease);
    assertThat(r.state()).isEqualTo(RegistrationState.LEASE_LOST);
    assertThat(events.types()).doesNotContain(REREGISTERED);
  }

  @Test
  void closePublishesDrainingThenRevokesAndASecondCloseIsANoOp() throws Exception {
    EventRecorder events = new EventRecorder();
    Instance instance = Instance.of(service, "10.0.0.7", 8080);
    Registration r = registry.register(instance, FAST.toBuilder().drain(Duration.ofMillis(500)).build(), events);
    List<WatchEvent> seen = new CopyOnWriteArrayList<>();
    try (Watch.Watcher w = check.client.getWatchClient().watch(Etcd.bytes(keyOf(instance)),
        WatchOption.builder().withRevision(check.get(keyOf(instance)).orElseThrow().getModRevision() + 1).build(),
        resp -> seen.addAll(resp.getEvents()))) {
      r.close();
      r.close();
      await().atMost(Duration.ofSeconds(10)).until(() -> seen.size() >= 2);
    }
    assertThat(seen.get(0).getEventType()).isEqualTo(WatchEvent.EventType.PUT);
    assertThat(seen.get(0).getKeyValue().getValue().toString(StandardCharsets.UTF_8)).contains("\"state\":\"DRAINING\"");
    assertThat(seen.get(1).getEventType()).isEqualTo(WatchEvent.EventType.DELETE);
    assertThat(r.state()).isEqualTo(RegistrationState.CLOSED);
    assertThat(events.types()).containsSubsequence(REGISTERED, DRAINING, REVOKED);
    assertThat(events.types().stream().filter(t -> t == REVOKED)).hasSize(1);
    assertThat(check.leases()).doesNotContain(r.leaseId());
  }

  /**
   * A listener runs on the registration's loop, holding its run permit; one that closes its own registration
   * cannot wait for a close that can only run after it. So close() there queues the close and returns, and the
   * registration is revoked once the listener is done. The request timeout of 20 s makes close()'s own wait 61 s:
   * a listener that waited for it would hold the loop far past the bound below.
   */
  @Test
  void aListenerThatClosesItsOwnRegistrationReturnsAtOnceAndTheRevokeFollowsIt() throws Exception {
    RegistrarConfig slowLimit = FAST.toBuilder().ttl(Duration.ofSeconds(60)).keepaliveInterval(Duration.ofSeconds(20))
        .requestTimeout(Duration.ofSeconds(20)).build();
    AtomicReference<Registration> self = new AtomicReference<>();
    List<String> order = new CopyOnWriteArrayList<>();
    Instance instance = Instance.of(service, "10.0.0.7", 8080);
    Registration r = registry.register(instance, slowLimit, event -> {
      order.add(event.type().name());
      if (event.type() == UPDATED) {
        self.get().close();
        order.add("close() returned");
      }
    });
    self.set(r);

    r.update(i -> i.weight(5)).get(10, TimeUnit.SECONDS);

    await().atMost(Duration.ofSeconds(15)).until(() -> r.state() == RegistrationState.CLOSED);
    assertThat(order).containsSubsequence("REGISTERED", "UPDATED", "close() returned", "REVOKED");
    assertThat(check.get(keyOf(instance))).isEmpty();
  }

  @Test
  void withDrainZeroTheKeyIsGoneAsSoonAsCloseReturnsWithoutADrainingPut() throws Exception {
    Instance instance = Instance.of(service, "10.0.0.7", 8080);
    Registration r = registry.register(instance, FAST, null);
    List<WatchEvent> seen = new CopyOnWriteArrayList<>();
    try (Watch.Watcher w = check.client.getWatchClient().watch(Etcd.bytes(keyOf(instance)),
        WatchOption.builder().withRevision(check.get(keyOf(instance)).orElseThrow().getModRevision() + 1).build(),
        resp -> seen.addAll(resp.getEvents()))) {
      long start = System.nanoTime();
      r.close();
      Duration took = Duration.ofNanos(System.nanoTime() - start);
      assertThat(check.get(keyOf(instance))).isEmpty();
      System.out.println("close() with drain 0 took " + took.toMillis() + " ms (revoke only)");
      assertThat(took).isLessThan(Duration.ofSeconds(3));
      await().atMost(Duration.ofSeconds(10)).until(() -> !seen.isEmpty());
    }
    assertThat(seen).hasSize(1);
    assertThat(seen.get(0).getEventType()).isEqualTo(WatchEvent.EventType.DELETE);
  }

  @Test
  void anUnreachableRegistryAtStartFailsAfterTheStartTimeoutWithAClearMessage() {
    try (EtcdRegistry nowhere = EtcdRegistry.connect(EtcdConfig.of("http://127.0.0.1:" + FreePorts.pick()))) {
      long start = System.nanoTime();
      assertThatThrownBy(() -> nowhere.register(Instance.of(service, "10.0.0.7", 8080),
          FAST.toBuilder().startTimeout(Duration.ofSeconds(1)).build(), null))
          .isInstanceOf(RegistryUnavailableException.class)
          .hasMessageContaining("did not answer within 1000 ms")
          .hasMessageContaining("EtcdConfig's endpoints")
          .as("the library speaks of its configuration; the CLI adds its flags").hasMessageNotContaining("--endpoints");
      assertThat(Duration.ofNanos(System.nanoTime() - start)).isLessThan(Duration.ofSeconds(10));
    }
  }
}
