package dev.muster.spring;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.muster.etcd.EtcdRegistry;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.cloud.client.discovery.DiscoveryClient;
import org.springframework.cloud.client.loadbalancer.LoadBalancedRetryFactory;
import org.springframework.cloud.client.serviceregistry.AutoServiceRegistrationAutoConfiguration;
import org.springframework.cloud.commons.util.UtilAutoConfiguration;

/** Which beans appear for which properties; no etcd is contacted (jetcd connects on first use). */
class MusterAutoConfigurationTest {
  private final ApplicationContextRunner runner = new ApplicationContextRunner()
      .withConfiguration(AutoConfigurations.of(UtilAutoConfiguration.class,
          AutoServiceRegistrationAutoConfiguration.class, MusterAutoConfiguration.class,
          MusterServiceRegistryAutoConfiguration.class, MusterDiscoveryAutoConfiguration.class,
          MusterLoadBalancerAutoConfiguration.class, MusterActuatorAutoConfiguration.class,
          org.springframework.cloud.loadbalancer.config.LoadBalancerAutoConfiguration.class,
          org.springframework.cloud.loadbalancer.config.BlockingLoadBalancerClientAutoConfiguration.class));

  @Test
  void withoutMusterEndpointsNothingOfMusterIsCreated() {
    runner.withPropertyValues("spring.application.name=orders").run(ctx -> {
      assertThat(ctx).hasNotFailed();
      assertThat(ctx).doesNotHaveBean(EtcdRegistry.class).doesNotHaveBean(MusterClients.class)
          .doesNotHaveBean(MusterServiceRegistry.class).doesNotHaveBean(MusterDiscoveryClient.class);
    });
  }

  @Test
  void withEndpointsTheRegistryDiscoveryLoadBalancingHealthAndTheEndpointAreThere() {
    runner.withPropertyValues("muster.endpoints=http://127.0.0.1:2", "spring.application.name=orders",
        "muster.instance.address=127.0.0.1", "muster.instance.zone=eu-1a", "muster.instance.tags=blue,canary",
        "muster.instance.metadata.team=fulfilment").run(ctx -> {
          assertThat(ctx).hasNotFailed();
          assertThat(ctx).hasSingleBean(EtcdRegistry.class).hasSingleBean(MusterClients.class)
              .hasSingleBean(MusterServiceRegistry.class).hasSingleBean(MusterAutoServiceRegistration.class)
              .hasSingleBean(MusterDrainLifecycle.class).hasSingleBean(MusterDiscoveryClient.class)
              .hasSingleBean(MusterReactiveDiscoveryClient.class).hasSingleBean(MusterLoadBalancerLifecycle.class)
              .hasSingleBean(MusterHealthIndicator.class).hasSingleBean(MusterEndpoint.class);
          assertThat(ctx.getBean(LoadBalancedRetryFactory.class)).isInstanceOf(MusterRetryFactory.class);
          assertThat(ctx.getBeansOfType(DiscoveryClient.class).values())
              .anyMatch(MusterDiscoveryClient.class::isInstance);
          MusterRegistration r = ctx.getBean(MusterRegistration.class);
          assertThat(r.getServiceId()).isEqualTo("orders");
          assertThat(r.getPort()).as("no port before the web server started").isZero();
          dev.muster.registry.Instance bound = r.bind(8081);
          assertThat(bound.port()).isEqualTo(8081);
          assertThat(bound.zone()).isEqualTo("eu-1a");
          assertThat(bound.tags()).containsExactly("blue", "canary");
          assertThat(bound.metadata()).containsEntry("team", "fulfilment");
          assertThat(bound.id()).as("default id names the bound port").contains("8081");
        });
  }

  @Test
  void theDefaultsAreDocumentedOnes() {
    runner.withPropertyValues("muster.endpoints=http://127.0.0.1:2", "spring.application.name=orders")
        .run(ctx -> {
          MusterProperties p = ctx.getBean(MusterProperties.class);
          assertThat(p.namespace()).isEqualTo("default");
          assertThat(p.requestTimeout()).isEqualTo(Duration.ofSeconds(2));
          assertThat(p.instance().ttl()).isEqualTo(Duration.ofSeconds(10));
          assertThat(p.instance().keepalive()).isEqualTo(Duration.ofSeconds(3));
          assertThat(p.instance().drain()).isEqualTo(Duration.ofSeconds(5));
          assertThat(p.instance().weight()).isEqualTo(100);
          assertThat(p.instance().version()).isEqualTo("v1");
          assertThat(p.discovery().firstSetTimeout()).isEqualTo(Duration.ofSeconds(10));
          assertThat(p.loadbalancer().retryBudget()).isEqualTo(new MusterProperties.RetryBudget(
              Duration.ofSeconds(10), 0.2, 10));
        });
  }

  @Test
  void registrationCanBeTurnedOffAndThenNeedsNoApplicationName() {
    runner.withPropertyValues("muster.endpoints=http://127.0.0.1:2",
        "spring.cloud.service-registry.auto-registration.enabled=false").run(ctx -> {
          assertThat(ctx).hasNotFailed();
          assertThat(ctx).doesNotHaveBean(MusterServiceRegistry.class).hasSingleBean(MusterDiscoveryClient.class);
        });
  }

  @Test
  void aMissingApplicationNameFailsTheStartWithOneClearReason() {
    runner.withPropertyValues("muster.endpoints=http://127.0.0.1:2").run(ctx -> {
      assertThat(ctx).hasFailed();
      assertThat(ctx.getStartupFailure()).rootCause().hasMessageContaining("spring.application.name is not set")
          .hasMessageContaining("auto-registration.enabled=false");
    });
  }

  @Test
  void aBadInstanceValueFailsTheStartNamingIt() {
    runner.withPropertyValues("muster.endpoints=http://127.0.0.1:2", "spring.application.name=orders",
        "muster.instance.address=127.0.0.1", "muster.instance.weight=50000").run(ctx -> {
          assertThat(ctx).hasFailed();
          assertThat(ctx.getStartupFailure()).rootCause().hasMessageContaining("weight").hasMessageContaining("50000");
        });
  }

  @Test
  void aBadRetryBudgetFailsTheStartNamingTheProperty() {
    runner.withPropertyValues("muster.endpoints=http://127.0.0.1:2", "spring.application.name=orders",
        "muster.loadbalancer.retry-budget.percent-can-retry=1.5").run(ctx -> {
          assertThat(ctx).hasFailed();
          assertThat(ctx.getStartupFailure()).rootCause()
              .hasMessageContaining("muster.loadbalancer.retry-budget.percent-can-retry 1.5 is invalid")
              .hasMessageContaining("0.0 to 1.0");
        });
  }

  @Test
  void aWebClientsRetriesAreWithinTheBudgetWhereSpringCloudRetriesAtAll() {
    ApplicationContextRunner reactive = runner.withConfiguration(AutoConfigurations.of(
        org.springframework.cloud.client.loadbalancer.reactive.LoadBalancerBeanPostProcessorAutoConfiguration.class,
        org.springframework.cloud.client.loadbalancer.reactive.ReactorLoadBalancerClientAutoConfiguration.class))
        .withPropertyValues("muster.endpoints=http://127.0.0.1:2", "spring.application.name=orders");
    reactive.withPropertyValues("spring.cloud.loadbalancer.retry.enabled=true").run(ctx -> {
      assertThat(ctx).hasNotFailed();
      assertThat(ctx.getBean(org.springframework.cloud.client.loadbalancer.reactive
          .LoadBalancedExchangeFilterFunction.class)).isInstanceOf(MusterRetryableExchangeFilterFunction.class);
    });
    reactive.run(ctx -> {
      assertThat(ctx).hasNotFailed();
      assertThat(ctx).doesNotHaveBean(MusterRetryableExchangeFilterFunction.class);
      assertThat(ctx.getBean(org.springframework.cloud.client.loadbalancer.reactive
          .LoadBalancedExchangeFilterFunction.class)).isInstanceOf(org.springframework.cloud.client.loadbalancer
          .reactive.ReactorLoadBalancerExchangeFilterFunction.class);
    });
  }

  @Test
  void aUserWithoutAPasswordFileFailsTheStartSayingWhatIsMissing() {
    runner.withPropertyValues("muster.endpoints=http://127.0.0.1:2", "spring.application.name=orders",
        "muster.user=orders").run(ctx -> {
          assertThat(ctx).hasFailed();
          assertThat(ctx.getStartupFailure()).rootCause().hasMessageContaining("muster.password-file");
        });
  }

  /** {@code muster.*} bound as Spring binds it, without starting a context (nothing connects). */
  private static MusterProperties bind(java.util.Map<String, String> properties) {
    return new org.springframework.boot.context.properties.bind.Binder(
        new org.springframework.boot.context.properties.source.MapConfigurationPropertySource(properties))
        .bindOrCreate("muster", MusterProperties.class);
  }

  @Test
  void anEtcdPasswordOverPlainHttpBeyondLoopbackNeedsMusterInsecureCredentials(@TempDir Path dir) throws Exception {
    Path secret = Files.writeString(dir.resolve("pw"), "s3cret\n");
    java.util.Map<String, String> remote = java.util.Map.of("muster.endpoints", "http://10.0.0.1:2379",
        "muster.user", "orders", "muster.password-file", secret.toString());

    assertThatThrownBy(() -> MusterAutoConfiguration.etcdConfig(bind(remote)))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessage("muster.user orders's password would cross the network in clear over http:// to"
            + " [http://10.0.0.1:2379]: use https:// endpoints, or set muster.insecure-credentials=true knowing"
            + " anyone on the path can read it");
    java.util.Map<String, String> allowed = new java.util.HashMap<>(remote);
    allowed.put("muster.insecure-credentials", "true");
    assertThat(MusterAutoConfiguration.etcdConfig(bind(allowed)).allowInsecureCredentials()).isTrue();
    java.util.Map<String, String> loopback = new java.util.HashMap<>(remote);
    loopback.put("muster.endpoints", "http://127.0.0.1:2379");
    assertThat(MusterAutoConfiguration.etcdConfig(bind(loopback)).credentials().user()).isEqualTo("orders");
  }
}
