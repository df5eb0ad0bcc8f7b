package dev.muster.grpc;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.muster.cache.CacheConfig;
import dev.muster.client.MusterClient;
import dev.muster.etcd.EtcdConfig;
import dev.muster.etcd.EtcdRegistry;
import dev.muster.registry.Instance;
import dev.muster.registry.Registration;
import dev.muster.testing.EtcdCluster;
import dev.muster.testing.EtcdMember;
import io.grpc.NameResolver;
import io.grpc.Status;
import io.grpc.SynchronizationContext;
import java.net.URI;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.RegisterExtension;

/** The resolver itself, with a recording listener: what it tells a channel while etcd is up, down, or never was. */
@Timeout(value = 3, unit = TimeUnit.MINUTES)
class MusterNameResolverIT {
  @RegisterExtension
  static EtcdCluster etcd = EtcdCluster.builder().members(1).build();

  private final SynchronizationContext sync = new SynchronizationContext((t, e) -> {
    throw new AssertionError("uncaught in the synchronization context", e);
  });
  private final ExecutorService offload = Executors.newSingleThreadExecutor();
  private final Recording recording = new Recording();
  private NameResolver resolver;

  @AfterEach
  void tearDown() throws InterruptedException {
    if (resolver != null) {
      sync.execute(resolver::shutdown);
    }
    offload.shutdown();
    assertThat(offload.awaitTermination(10, TimeUnit.SECONDS)).isTrue();
  }

  private NameResolver start(MusterNameResolverProvider provider, String target) {
    resolver = provider.newNameResolver(URI.create(target), args());
    sync.execute(() -> resolver.start(recording));
    return resolver;
  }

  private NameResolver.Args args() {
    return NameResolver.Args.newBuilder()
        .setDefaultPort(443)
        .setProxyDetector(address -> null)
        .setSynchronizationContext(sync)
        .setServiceConfigParser(new NameResolver.ServiceConfigParser() {
          @Override
          public NameResolver.ConfigOrError parseServiceConfig(Map<String, ?> rawServiceConfig) {
            return NameResolver.ConfigOrError.fromConfig(rawServiceConfig);
          }
        })
        .setOffloadExecutor(offload)
        .build();
  }

  @Test
  void aServiceAskedForByTwoChannelsAndAClientIsWatchedOnceUntilTheLastLetsGo() {
    String service = "echo-" + UUID.randomUUID().toString().substring(0, 8);
    try (EtcdRegistry registry = EtcdRegistry.connect(EtcdConfig.of(etcd.endpointsString()));
         Registration a = registry.register(Instance.of(service, "127.0.0.1", 50001).id("a"))) {
      MusterNameResolverProvider provider = MusterNameResolverProvider.of(registry);
      start(provider, "muster:///" + service);
      Recording secondHeard = new Recording();
      NameResolver second = provider.newNameResolver(URI.create("muster:///" + service), args());
      sync.execute(() -> second.start(secondHeard));
      CacheConfig v1 = CacheConfig.builder(service).version(Instance.DEFAULT_VERSION).build(); // what a target watches
      MusterClient client = MusterClient.builder(registry).cache(v1).build();
      await().atMost(Duration.ofSeconds(15)).until(() -> recording.last() != null && secondHeard.last() != null
          && client.balancer().endpoints().size() == 1);

      assertThat(registry.sharedCaches()).as("one cache for the service").isEqualTo(1);
      assertThat(registry.holds(v1)).isEqualTo(3);
      sync.execute(second::shutdown);
      await().atMost(Duration.ofSeconds(10)).until(() -> registry.holds(v1) == 2);
      try (Registration b = registry.register(Instance.of(service, "127.0.0.1", 50002).id("b"))) {
        await("the holders left see the next change").atMost(Duration.ofSeconds(15))
            .until(() -> recording.last().size() == 2 && client.balancer().endpoints().size() == 2);
        assertThat(secondHeard.last()).as("a resolver shut down hears nothing more").hasSize(1);
      }
      client.close();
      assertThat(registry.holds(v1)).isEqualTo(1);
      sync.execute(resolver::shutdown);
      resolver = null;
      await().atMost(Duration.ofSeconds(10)).until(() -> registry.sharedCaches() == 0);
    }
  }

  @Test
  void whileEtcdIsDownTheLastSetIsResentStaleAndNoErrorIsEverReported() {
    String service = "echo-" + UUID.randomUUID().toString().substring(0, 8);
    try (EtcdRegistry registry = EtcdRegistry.connect(EtcdConfig.of(etcd.endpointsString()));
         Registration a = registry.register(Instance.of(service, "127.0.0.1", 50001).id("a").zone("z1"));
         Registration b = registry.register(Instance.of(service, "127.0.0.1", 50002).id("b"))) {
      MusterNameResolverProvider provider = MusterNameResolverProvider.of(registry);
      start(provider, "muster:///" + service + "?zone=z1");
      await().atMost(Duration.ofSeconds(15)).until(() -> recording.last() != null && recording.last().size() == 2);
      NameResolver.ResolutionResult fresh = recording.results.get(recording.results.size() - 1);
      assertThat(fresh.getAttributes().get(MusterAttributes.STALE_SINCE)).isNull();
      assertThat(fresh.getServiceConfig().getConfig().toString()).contains("muster").contains("localZone=z1");
      assertThat(fresh.getAddressesOrError().getValue())
          .anySatisfy(g -> assertThat(g.getAttributes().get(MusterAttributes.ZONE)).isEqualTo("z1"));

      EtcdMember member = etcd.member(0);
      member.kill();
      try {
        await().atMost(Duration.ofSeconds(20)).until(() -> recording.lastStaleSince() != null);
        int before = recording.results.size();
        sync.execute(resolver::refresh);
        await().atMost(Duration.ofSeconds(5)).until(() -> recording.results.size() > before);
        assertThat(recording.last()).hasSize(2);
        assertThat(recording.lastStaleSince()).isNotNull();
        assertThat(provider.staleResults()).isPositive();
        assertThat(recording.errors).as("errors while a set is held").isEmpty();
      } finally {
        member.restart();
      }
      await().atMost(Duration.ofSeconds(30)).until(() -> recording.lastStaleSince() == null);
      assertThat(recording.last()).hasSize(2);
      assertThat(recording.errors).isEmpty();
    }
  }

  @Test
  void anErrorIsReportedWhenNoSetWasEverKnownBecauseEtcdIsUnreachable() {
    try (EtcdRegistry unreachable = EtcdRegistry.connect(EtcdConfig.of("http://127.0.0.1:1"))) {
      start(MusterNameResolverProvider.of(unreachable), "muster:///echo");
      await().atMost(Duration.ofSeconds(30)).until(() -> !recording.errors.isEmpty());
      Status error = recording.errors.get(0);
      assertThat(error.getCode()).isEqualTo(Status.Code.UNAVAILABLE);
      assertThat(error.getDescription()).contains("muster:///echo").contains("unreachable");
      assertThat(recording.results).isEmpty();
    }
  }

  /** Everything the resolver told its listener, in order. */
  private static final class Recording extends NameResolver.Listener2 {
    final List<NameResolver.ResolutionResult> results = new CopyOnWriteArrayList<>();
    final List<Status> errors = new CopyOnWriteArrayList<>();

    @Override
    public void onResult(NameResolver.ResolutionResult result) {
      results.add(result);
    }

    @Override
    public void onError(Status error) {
      errors.add(error);
    }

    List<?> last() {
      return results.isEmpty() ? null : results.get(results.size() - 1).getAddressesOrError().getValue();
    }

    Object lastStaleSince() {
      return results.isEmpty() ? null
          : results.get(results.size() - 1).getAttributes().get(MusterAttributes.STALE_SINCE);
    }
  }
}
