package dev.muster.grpc;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.muster.etcd.EtcdAuth;
import dev.muster.etcd.EtcdConfig;
import dev.muster.etcd.EtcdRegistry;
import dev.muster.testing.EtcdCluster;
import io.grpc.NameResolver;
import io.grpc.Status;
import io.grpc.SynchronizationContext;
import java.net.URI;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.RegisterExtension;

/** On an etcd with auth: a resolver whose user may not read the service reports etcd's refusal, as a gRPC status. */
@Timeout(value = 2, unit = TimeUnit.MINUTES)
@Tag("etcd-versions") // also run on etcd 3.4.23: see the etcd-3.4 failsafe execution
class MusterResolverAuthIT {
  @RegisterExtension
  static EtcdCluster etcd = EtcdCluster.builder().members(1).auth().build();

  @Test
  void aResolverRefusedReadAccessReportsPermissionDeniedWithEtcdsReason() {
    try (EtcdAuth auth = EtcdAuth.connect(EtcdConfig.builder().endpoints(etcd.endpointsString())
        .credentials("root", etcd.rootPassword()).build())) {
      auth.addUser("reader", "reader-secret");
      auth.grantConsumer("default", "orders", "reader");
    }
    SynchronizationContext sync = new SynchronizationContext((t, e) -> {
      throw new AssertionError(e);
    });
    List<Status> errors = new CopyOnWriteArrayList<>();
    List<NameResolver.ResolutionResult> results = new CopyOnWriteArrayList<>();
    try (EtcdRegistry registry = EtcdRegistry.connect(EtcdConfig.builder().endpoints(etcd.endpointsString())
        .credentials("reader", "reader-secret").build())) {
      NameResolver.Args args = NameResolver.Args.newBuilder().setDefaultPort(443).setProxyDetector(a -> null)
          .setSynchronizationContext(sync)
          .setServiceConfigParser(new NameResolver.ServiceConfigParser() {
            @Override
            public NameResolver.ConfigOrError parseServiceConfig(Map<String, ?> raw) {
              return NameResolver.ConfigOrError.fromConfig(raw);
            }
          }).build();
      NameResolver resolver = MusterNameResolverProvider.of(registry)
          .newNameResolver(URI.create("muster:///billing"), args);
      sync.execute(() -> resolver.start(new NameResolver.Listener2() {
        @Override
        public void onResult(NameResolver.ResolutionResult result) {
          results.add(result);
        }

        @Override
        public void onError(Status error) {
          errors.add(error);
        }
      }));
      try {
        await().atMost(Duration.ofSeconds(30))
            .until(() -> errors.stream().anyMatch(s -> s.getCode() == Status.Code.PERMISSION_DENIED));
        Status denied = errors.stream().filter(s -> s.getCode() == Status.Code.PERMISSION_DENIED).findFirst()
            .orElseThrow();
        System.out.println("refused: " + denied);
        assertThat(denied.getDescription()).contains("muster:///billing").contains("reader");
        assertThat(results).isEmpty();

        int before = errors.size();
        sync.execute(resolver::refresh); // a refresh reports the refusal again, it does not hide it
        await().atMost(Duration.ofSeconds(5)).until(() -> errors.size() > before);
        assertThat(errors.get(errors.size() - 1).getCode()).isEqualTo(Status.Code.PERMISSION_DENIED);
      } finally {
        sync.execute(resolver::shutdown);
      }
    }
  }
}
