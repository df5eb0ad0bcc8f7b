package dev.muster.etcd;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatCode;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.muster.cache.CacheConfig;
import dev.muster.cache.EndpointCache;
import dev.muster.registry.Instance;
import dev.muster.registry.InstanceCodec;
import dev.muster.registry.InstanceState;
import dev.muster.registry.RegistrarConfig;
import dev.muster.registry.Registration;
import dev.muster.sign.RecordSignature;
import dev.muster.sign.SigningKey;
import dev.muster.sign.TrustedKey;
import dev.muster.sign.TrustedKeys;
import dev.muster.sign.UnverifiedRecordException;
import dev.muster.testing.EtcdCluster;
import io.etcd.jetcd.ByteSequence;
import io.etcd.jetcd.KeyValue;
import io.etcd.jetcd.options.PutOption;
import java.time.Duration;
import java.util.List;
import java.util.Set;
import java.util.TreeSet;
import java.util.UUID;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * Signed records on real etcd: Muster's registrar signs what it puts, and a forger with write access to the
 * service's prefix (a plain jetcd client, no Muster code on the write path) is served by a cache that does not check
 * and excluded by one that trusts the provider's key.
 */
@Timeout(value = 2, unit = TimeUnit.MINUTES)
class SignedRecordsIT {
  @RegisterExtension
  static EtcdCluster etcd = EtcdCluster.builder().members(1).build();

  private static final Duration WITHIN = Duration.ofSeconds(20);
  private static final ObjectMapper JSON = new ObjectMapper();
  private static final RegistrarConfig FAST = RegistrarConfig.builder()
      .ttl(Duration.ofSeconds(3)).keepaliveInterval(Duration.ofSeconds(1)).drain(Duration.ZERO)
      .startTimeout(Duration.ofSeconds(5)).shutdownHook(false).build();

  private final SigningKey provider = SigningKey.generate();
  private EtcdRegistry registry;
  private Etcd forger;
  private String service;

  @BeforeEach
  void connect() {
    registry = EtcdRegistry.connect(EtcdConfig.of(etcd.endpointsString()));
    forger = new Etcd(etcd.endpoints());
    service = "svc-" + UUID.randomUUID().toString().substring(0, 8);
  }

  @AfterEach
  void disconnect() {
    registry.close();
    forger.close();
  }

  private Registration registerSigned(String id, SigningKey key, RegistrarConfig config) {
    return registry.register(Instance.of(service, "10.0.0.7", 8080).id(id), config.toBuilder().signingKey(key)
        .build());
  }

  private EndpointCache trusting(TrustedKey... keys) {
    return registry.watch(CacheConfig.builder(service)
        .trustedKeys(TrustedKeys.builder().service("default", service, keys).build()).build());
  }

  private EndpointCache notChecking() {
    return registry.watch(CacheConfig.builder(service).build());
  }

  private String keyOf(String id) {
    return registry.config().layout().instanceKey(Instance.of(service, "10.0.0.7", 8080).id(id));
  }

  @Test
  void forgedRecordsAreExcludedByACacheThatTrustsTheProviderAndServedByOneThatDoesNotCheck() throws Exception {
    registerSigned("good", provider, FAST);
    EndpointCache trusting = trusting(provider.trustedKey());
    EndpointCache plain = notChecking();
    await().atMost(WITHIN).until(() -> ids(trusting).equals(Set.of("good")) && ids(plain).equals(Set.of("good")));

    long lease = forger.client.getLeaseClient().grant(60).get(10, TimeUnit.SECONDS).getID();
    Instance evil = Instance.of(service, "10.6.6.6", 6666);
    forge("unsigned", InstanceCodec.encode(evil.id("unsigned")), lease);
    ObjectNode claimsTheKey = (ObjectNode) JSON.readTree(InstanceCodec.encodeSigned(evil.id("claims-the-key"),
        keyOf("claims-the-key"), lease, 1, java.time.Instant.now().plusSeconds(600), SigningKey.generate(), false));
    ((ObjectNode) claimsTheKey.get(RecordSignature.MEMBER)).put("kid", provider.keyId());
    forge("claims-the-key", JSON.writeValueAsBytes(claimsTheKey), lease);
    byte[] goodValue = forger.get(keyOf("good")).orElseThrow().getValue().getBytes();
    long last = forge("replayed", goodValue, lease); // the provider's own signed value, copied

    await().atMost(WITHIN).until(() -> plain.revision() >= last && trusting.revision() >= last);
    assertThat(ids(plain)).containsExactly("claims-the-key", "good", "replayed", "unsigned");
    assertThat(plain.unverifiedCount()).isZero();
    assertThat(ids(trusting)).containsExactly("good");
    assertThat(trusting.unverifiedCount()).isEqualTo(3);
    assertThat(trusting.malformedCount()).isZero();
    assertThat(trusting.current().instances().get(0).address()).isEqualTo("10.0.0.7");
  }

  /**
   * Issue 35: the provider's own signed UP, put back over its signed DRAINING on the same lease by another writer,
   * verifies as a signature; the trusting cache refuses it as older than what it accepted and keeps the instance out,
   * where a cache that does not check routes to the draining instance again.
   */
  @Test
  void anOlderSignedValuePutBackOverDrainingIsRefusedAsReplayed() throws Exception {
    Registration r = registerSigned("good", provider, FAST.toBuilder().drain(Duration.ofSeconds(10)).build());
    EndpointCache trusting = trusting(provider.trustedKey());
    EndpointCache plain = notChecking();
    await().atMost(WITHIN).until(() -> ids(trusting).equals(Set.of("good")));
    KeyValue up = forger.get(keyOf("good")).orElseThrow();

    r.drain();
    await().atMost(WITHIN).until(() -> trusting.current().instances().stream()
        .anyMatch(i -> i.state() == InstanceState.DRAINING));
    long rev = forge("good", up.getValue().getBytes(), up.getLease()); // the old UP, back on the same lease

    await().atMost(WITHIN).until(() -> trusting.revision() >= rev && plain.revision() >= rev);
    assertThat(plain.current().instances()).singleElement().extracting(Instance::state)
        .isEqualTo(InstanceState.UP);
    assertThat(ids(trusting)).as("refused, and the key's state unknown: not routable").isEmpty();
    assertThat(trusting.unverifiedCount()).isEqualTo(1);
    assertThatCode(() -> RecordSignature.verify(List.of(provider.trustedKey()), keyOf("good"), up.getLease(),
        up.getValue().getBytes())).as("the signature itself is good").doesNotThrowAnyException();
    r.closeAsync();
  }

  @Test
  void aRecordTamperedInPlaceLeavesTheTrustingSetAndTheProvidersNextSignedPutBringsItBack() throws Exception {
    Registration r = registerSigned("good", provider, FAST);
    EndpointCache trusting = trusting(provider.trustedKey());
    EndpointCache plain = notChecking();
    await().atMost(WITHIN).until(() -> ids(trusting).equals(Set.of("good")));

    KeyValue kv = forger.get(keyOf("good")).orElseThrow();
    ObjectNode tampered = (ObjectNode) JSON.readTree(kv.getValue().getBytes());
    tampered.put("port", 6666); // same key, same lease, same signature
    long rev = forge("good", JSON.writeValueAsBytes(tampered), kv.getLease());

    await().atMost(WITHIN).until(() -> trusting.revision() >= rev && plain.revision() >= rev);
    assertThat(ids(trusting)).isEmpty();
    assertThat(trusting.unverifiedCount()).isEqualTo(1);
    assertThat(plain.current().instances()).singleElement().extracting(Instance::port).isEqualTo(6666);

    r.update(i -> i.weight(7)).get(10, TimeUnit.SECONDS);
    await().atMost(WITHIN).until(() -> ids(trusting).equals(Set.of("good")));
    assertThat(trusting.current().instances()).singleElement()
        .satisfies(i -> assertThat(i.port()).isEqualTo(8080)).satisfies(i -> assertThat(i.weight()).isEqualTo(7));
  }

  @Test
  void aReRegistrationAfterALostLeaseIsSignedForTheNewLeaseAndDrainingIsSignedToo() {
    Registration r = registerSigned("good", provider, FAST.toBuilder().drain(Duration.ofSeconds(2)).build());
    EndpointCache trusting = trusting(provider.trustedKey());
    await().atMost(WITHIN).until(() -> ids(trusting).equals(Set.of("good")));
    long first = r.leaseId();

    forger.revoke(first); // the lease is gone behind the registrar's back: it re-registers under a new one
    await().atMost(WITHIN).until(() -> r.leaseId() != first && ids(trusting).equals(Set.of("good")));
    KeyValue kv = forger.get(keyOf("good")).orElseThrow();
    List<TrustedKey> trusted = List.of(provider.trustedKey());
    byte[] value = kv.getValue().getBytes();
    assertThat(kv.getLease()).isEqualTo(r.leaseId());
    assertThatCode(() -> RecordSignature.verify(trusted, keyOf("good"), kv.getLease(), value))
        .doesNotThrowAnyException();
    assertThatThrownBy(() -> RecordSignature.verify(trusted, keyOf("good"), first, value))
        .isInstanceOf(UnverifiedRecordException.class);

    r.closeAsync();
    await().atMost(WITHIN).until(() -> trusting.current().instances().stream()
        .anyMatch(i -> i.state() == InstanceState.DRAINING));
    await().atMost(WITHIN).until(() -> ids(trusting).isEmpty());
    assertThat(trusting.unverifiedCount()).isZero();
  }

  @Test
  void twoTrustedKeysAtOnceServeProvidersSignedByEitherWhileTheyRotate() {
    SigningKey next = SigningKey.generate();
    registerSigned("old", provider, FAST);
    registerSigned("new", next, FAST);

    EndpointCache during = trusting(provider.trustedKey(), next.trustedKey());
    EndpointCache after = trusting(next.trustedKey());

    await().atMost(WITHIN).until(() -> ids(during).equals(Set.of("new", "old")) && ids(after).equals(Set.of("new")));
    assertThat(during.unverifiedCount()).isZero();
    assertThat(after.unverifiedCount()).isEqualTo(1);
  }

  /** Puts {@code value} under {@code id}'s key on {@code lease} with the plain client; returns the revision. */
  private long forge(String id, byte[] value, long lease) throws Exception {
    return forger.client.getKVClient().put(Etcd.bytes(keyOf(id)), ByteSequence.from(value),
        PutOption.builder().withLeaseId(lease).build()).get(10, TimeUnit.SECONDS).getHeader().getRevision();
  }

  private static Set<String> ids(EndpointCache cache) {
    Set<String> ids = new TreeSet<>();
    cache.current().instances().forEach(i -> ids.add(i.id()));
    return ids;
  }
}
