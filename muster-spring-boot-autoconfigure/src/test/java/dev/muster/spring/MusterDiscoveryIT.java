package dev.muster.spring;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import com.sun.net.httpserver.HttpServer;
import dev.muster.etcd.EtcdConfig;
import dev.muster.health.Prober;
import dev.muster.etcd.EtcdRegistry;
import dev.muster.registry.Instance;
import dev.muster.registry.InstanceState;
import dev.muster.registry.RegistrarConfig;
import dev.muster.registry.Registration;
import dev.muster.testing.EtcdCluster;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.net.InetSocketAddress;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.health.contributor.Health;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.cloud.client.ServiceInstance;
import org.springframework.cloud.client.loadbalancer.Response;
import org.springframework.cloud.commons.util.UtilAutoConfiguration;
import reactor.core.Disposable;

/**
 * Discovery, the pushing supplier, the load balancer and health on a real etcd, in a Spring context without a web
 * server (registration off): what other processes register is what the application sees, change by change.
 */
@Timeout(value = 2, unit = TimeUnit.MINUTES)
class MusterDiscoveryIT {
  @RegisterExtension
  static EtcdCluster etcd = EtcdCluster.builder().members(1).build();

  private final String namespace = "it" + Long.toHexString(System.nanoTime() & 0xffffff);
  private EtcdRegistry providers;

  @BeforeEach
  void connect() {
    providers = EtcdRegistry.connect(EtcdConfig.of(etcd.endpointsString()));
  }

  @AfterEach
  void close() {
    providers.close();
  }

  private Registration register(String id, int port) {
    return providers.register(Instance.of("orders", "127.0.0.1", port).namespace(namespace).id(id).zone("eu-1a")
        .meta("team", "fulfilment"), RegistrarConfig.defaults().toBuilder().shutdownHook(false).build());
  }

  private ApplicationContextRunner runner() {
    return new ApplicationContextRunner()
        .withConfiguration(AutoConfigurations.of(UtilAutoConfiguration.class, MusterAutoConfiguration.class,
            MusterDiscoveryAutoConfiguration.class, MusterActuatorAutoConfiguration.class))
        .withBean(MeterRegistry.class, SimpleMeterRegistry::new)
        .withPropertyValues("muster.endpoints=" + etcd.endpointsString(), "muster.namespace=" + namespace,
            "spring.cloud.service-registry.auto-registration.enabled=false");
  }

  @Test
  void discoveryTheSupplierAndTheBalancerFollowEveryChangeOfTheRegistry() {
    register("o1", 9001);
    register("o2", 9002);
    runner().run(ctx -> {
      assertThat(ctx).hasNotFailed();
      MusterDiscoveryClient discovery = ctx.getBean(MusterDiscoveryClient.class);
      List<ServiceInstance> instances = discovery.getInstances("orders");
      assertThat(instances).extracting(ServiceInstance::getInstanceId).containsExactlyInAnyOrder("o1", "o2");
      assertThat(instances.get(0).getMetadata()).containsEntry("team", "fulfilment").containsEntry("zone", "eu-1a")
          .containsEntry("muster.state", "UP").containsEntry("weight", "100");
      assertThat(instances).extracting(ServiceInstance::getUri).extracting(Object::toString)
          .contains("http://127.0.0.1:9001");
      assertThat(discovery.getServices()).containsExactly("orders");
      assertThat(ctx.getBean(MusterReactiveDiscoveryClient.class).getInstances("orders").collectList()
          .block(Duration.ofSeconds(10))).hasSize(2);

      MusterClients clients = ctx.getBean(MusterClients.class);
      MusterServiceInstanceListSupplier supplier = new MusterServiceInstanceListSupplier("orders", clients);
      List<List<String>> sets = new CopyOnWriteArrayList<>();
      List<String> monitorsHeld = new CopyOnWriteArrayList<>();
      Disposable subscription = supplier.get().subscribe(list -> {
        java.lang.management.ThreadInfo me = java.lang.management.ManagementFactory.getThreadMXBean()
            .getThreadInfo(new long[] {Thread.currentThread().getId()}, true, false)[0];
        for (java.lang.management.MonitorInfo m : me.getLockedMonitors()) {
          monitorsHeld.add(m.getClassName());
        }
        sets.add(list.stream().map(ServiceInstance::getInstanceId).sorted().toList());
      });
      try {
        await("the supplier's first set").atMost(Duration.ofSeconds(10))
            .until(() -> sets.contains(List.of("o1", "o2")));
        Registration o3 = register("o3", 9003);
        await("the supplier pushes o3").atMost(Duration.ofSeconds(10))
            .until(() -> sets.contains(List.of("o1", "o2", "o3")));
        o3.update(i -> i.state(InstanceState.DRAINING)).get(10, TimeUnit.SECONDS);
        await("the supplier drops DRAINING o3").atMost(Duration.ofSeconds(10))
            .until(() -> sets.get(sets.size() - 1).equals(List.of("o1", "o2")));
        assertThat(monitorsHeld).as("monitors held while a subscriber ran").isEmpty();

        MusterLoadBalancer balancer = new MusterLoadBalancer("orders", clients);
        for (int i = 0; i < 30; i++) {
          Response<ServiceInstance> picked = balancer.choose(null).block(Duration.ofSeconds(10));
          assertThat(picked.hasServer()).isTrue();
          assertThat(picked.getServer().getInstanceId()).as("DRAINING o3 is never picked").isIn("o1", "o2");
        }
      } finally {
        subscription.dispose();
      }

      Health health = ctx.getBean(MusterHealthIndicator.class).health();
      assertThat(health.getStatus().getCode()).isEqualTo("UP");
      @SuppressWarnings("unchecked")
      Map<String, Object> cache = (Map<String, Object>) ((Map<String, Object>) health.getDetails().get("caches"))
          .get("orders");
      assertThat(cache).containsEntry("ready", true).containsEntry("stale", false).containsEntry("endpoints", 3);
      assertThat(ctx.getBean(MusterEndpoint.class).muster()).containsKeys("etcd", "registration", "caches");
      MeterRegistry meters = ctx.getBean(MeterRegistry.class);
      assertThat(meters.get("muster.cache.endpoints").tag("service", "orders").gauge().value()).isEqualTo(3.0);
      assertThat(meters.get("muster.cache.stale").tag("service", "orders").gauge().value()).isZero();
      assertThat(meters.get("muster.cache.revision").tag("service", "orders").gauge().value()).isPositive();
    });
  }

  /** A JDK server on loopback whose /health answers {@code status}. */
  private static HttpServer health(int status) throws java.io.IOException {
    HttpServer server = HttpServer.create(new InetSocketAddress("127.0.0.1", 0), 16);
    server.createContext("/health", exchange -> {
      exchange.sendResponseHeaders(status, -1);
      exchange.close();
    });
    server.start();
    return server;
  }

  @Test
  void withMusterHealthProbeAnInstanceWhoseProbeFailsIsNotPickedThoughItsLeaseIsAlive() throws Exception {
    HttpServer ok = health(200);
    HttpServer failing = health(503);
    try {
      register("o1", ok.getAddress().getPort());
      register("o2", failing.getAddress().getPort());
      runner().withPropertyValues("muster.health.probe=http:/health", "muster.health.interval=200ms",
          "muster.health.timeout=500ms").run(ctx -> {
            assertThat(ctx).hasNotFailed();
            MusterClients clients = ctx.getBean(MusterClients.class);
            MusterLoadBalancer balancer = new MusterLoadBalancer("orders", clients);
            assertThat(balancer.choose(null).block(Duration.ofSeconds(10)).hasServer()).isTrue();
            Prober prober = clients.client("orders").prober().orElseThrow();
            assertThat(prober.config().describe()).isEqualTo("http GET /health expecting 200");
            await("o2 probed down").atMost(Duration.ofSeconds(20)).until(() -> clients.client("orders").balancer()
                .endpoints().stream().anyMatch(e -> e.instance().id().equals("o2") && e.isProbeDown()));
            for (int i = 0; i < 30; i++) {
              assertThat(balancer.choose(null).block(Duration.ofSeconds(10)).getServer().getInstanceId())
                  .as("o2 fails its probes").isEqualTo("o1");
            }
            assertThat(prober.failures()).isPositive();
            assertThat(prober.passes()).isPositive();
            MeterRegistry meters = ctx.getBean(MeterRegistry.class);
            assertThat(meters.get("muster.probe.down").tag("service", "orders").gauge().value()).isEqualTo(1.0);
            assertThat(meters.get("muster.probe.results").tag("result", "fail").functionCounter().count())
                .isPositive();
            assertThat(meters.get("muster.balancer.panic").tag("service", "orders").gauge().value()).isZero();
            System.gc(); // a gauge that held its state weakly would read NaN from here on
            assertThat(meters.get("muster.balancer.over.max.stale").tag("service", "orders").gauge().value()).isZero();
          });
    } finally {
      ok.stop(0);
      failing.stop(0);
    }
  }

  @Test
  void aBadProbePropertyFailsTheStartWithWhatToUse() {
    runner().withPropertyValues("muster.health.probe=udp").run(ctx -> {
      assertThat(ctx).hasFailed();
      assertThat(ctx.getStartupFailure()).rootCause().hasMessageContaining("probe")
          .hasMessageContaining("use http:/PATH, tcp");
    });
    runner().withPropertyValues("muster.health.probe=grpc").run(ctx -> { // muster-grpc is not on this class path
      assertThat(ctx).hasFailed();
      assertThat(ctx.getStartupFailure()).rootCause().hasMessageContaining("add dev.muster:muster-grpc");
    });
  }
}
