package dev.muster.grpc;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.muster.InvalidInputException;
import dev.muster.balance.BalancerConfig;
import dev.muster.etcd.EtcdConfig;
import io.grpc.NameResolver.ConfigOrError;
import io.grpc.Status;
import java.net.URI;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** Targets, the no-argument provider's environment, and the policy's JSON config. */
class MusterConfigTest {

  @Test
  void aTargetNamesTheServiceAndOptionallyNamespaceVersionAndZone() {
    MusterTarget t = MusterTarget.parse(URI.create("muster:///echo?namespace=prod&version=v2&zone=eu-1a"));
    assertThat(t).isEqualTo(new MusterTarget("echo", "prod", "v2", "eu-1a", null, null, null, null, null));
    assertThat(MusterTarget.parse(URI.create("muster:///echo")))
        .isEqualTo(new MusterTarget("echo", "default", "v1", null, null, null, null, null, null));
    assertThat(t.cacheConfig().namespace()).isEqualTo("prod");
    assertThat(t.policyConfig()).isEqualTo(Map.of("localZone", "eu-1a"));
  }

  @Test
  void aTargetCarriesTheStalenessBoundAndTheProbeIntoThePolicysConfig() {
    MusterTarget t = MusterTarget.parse(URI.create("muster:///echo?maxStale=500ms&stalePolicy=fail_closed"
        + "&probe=grpc"));
    assertThat(t.policyConfig()).isEqualTo(Map.of("maxStale", "0.5s", "stalePolicy", "FAIL_CLOSED", "probe",
        "grpc"));
    MusterLoadBalancerProvider.Config c = MusterLoadBalancerProvider.parse(t.policyConfig());
    assertThat(c.balancer().maxStale()).isEqualTo(java.time.Duration.ofMillis(500));
    assertThat(c.balancer().stalePolicy()).isEqualTo(dev.muster.balance.StalePolicy.FAIL_CLOSED);
    assertThat(c.probe().kind()).isEqualTo(dev.muster.health.ProbeConfig.Kind.GRPC);
    assertThatThrownBy(() -> MusterTarget.parse(URI.create("muster:///echo?probe=udp")))
        .isInstanceOf(InvalidInputException.class).hasMessageContaining("probe");
    assertThatThrownBy(() -> MusterTarget.parse(URI.create("muster:///echo?stalePolicy=never")))
        .hasMessageContaining("use FAIL_CLOSED or KEEP_FAILING_ENDPOINTS_OUT");
  }

  @Test
  void aMalformedTargetIsRefusedNamingWhatIsAllowed() {
    assertThatThrownBy(() -> MusterTarget.parse(URI.create("muster://etcd:2379/echo")))
        .isInstanceOf(InvalidInputException.class).hasMessageContaining("no authority");
    assertThatThrownBy(() -> MusterTarget.parse(URI.create("muster:///echo?zonee=x")))
        .hasMessageContaining("unknown parameter zonee");
    assertThatThrownBy(() -> MusterTarget.parse(URI.create("muster:///a/b")))
        .hasMessageContaining("muster:///SERVICE");
  }

  @Test
  void theProviderAnswersOnlyForItsScheme() {
    MusterNameResolverProvider p = new MusterNameResolverProvider();
    assertThat(p.getDefaultScheme()).isEqualTo("muster");
    assertThat(p.newNameResolver(URI.create("dns:///echo"), null)).isNull();
  }

  @Test
  void theEnvironmentIsReadWithTheCommandLinesNamesAndDefaults(@TempDir Path dir) throws Exception {
    Path ca = Files.writeString(dir.resolve("ca.pem"), "-----BEGIN CERTIFICATE-----\n");
    Path password = Files.writeString(dir.resolve("password"), "s3cret\n");
    EtcdConfig none = MusterNameResolverProvider.etcdConfigFromEnvironment(name -> null);
    assertThat(none.endpoints()).containsExactly(URI.create(EtcdConfig.DEFAULT_ENDPOINT));
    assertThat(none.credentials()).isNull();

    Map<String, String> env = Map.of("MUSTER_ENDPOINTS", "https://10.0.0.1:2379,https://10.0.0.2:2379",
        "MUSTER_CACERT", ca.toString(), "MUSTER_AUTHORITY", "etcd.internal",
        "MUSTER_USER", "app", "MUSTER_PASSWORD_FILE", password.toString());
    EtcdConfig tls = MusterNameResolverProvider.etcdConfigFromEnvironment(env::get);
    assertThat(tls.endpoints()).hasSize(2);
    assertThat(tls.tls().caCert()).isEqualTo(ca);
    assertThat(tls.credentials().user()).isEqualTo("app");
    assertThat(tls.credentials().password()).isEqualTo("s3cret");
    assertThat(tls.tls().authority()).isEqualTo("etcd.internal");
  }

  @Test
  void aUserWithoutAPasswordFileIsRefusedNamingTheMissingVariable() {
    assertThatThrownBy(() -> MusterNameResolverProvider.etcdConfigFromEnvironment(Map.of("MUSTER_USER", "app")::get))
        .isInstanceOf(InvalidInputException.class).hasMessageContaining("MUSTER_PASSWORD_FILE");
    assertThatThrownBy(() -> MusterNameResolverProvider.etcdConfigFromEnvironment(
        Map.of("MUSTER_PASSWORD_FILE", "/p")::get)).hasMessageContaining("MUSTER_USER");
  }

  @Test
  void thePolicyConfigDefaultsToWeightedRandomAndTakesZonePolicyAndEjectionSettings() {
    MusterLoadBalancerProvider p = new MusterLoadBalancerProvider();
    ConfigOrError empty = p.parseLoadBalancingPolicyConfig(Map.of());
    assertThat(empty.getConfig()).isEqualTo(MusterLoadBalancerProvider.Config.defaults());
    assertThat(((MusterLoadBalancerProvider.Config) empty.getConfig()).balancer().policy())
        .isEqualTo(BalancerConfig.Policy.WEIGHTED_RANDOM);

    MusterLoadBalancerProvider.Config c = (MusterLoadBalancerProvider.Config) p.parseLoadBalancingPolicyConfig(
        Map.of("policy", "power_of_two", "localZone", "eu-1a", "minLocalShare", 0.3,
            "outlierDetection", Map.of("consecutiveLocalOriginFailure", 3.0, "baseEjectionTime", "2.5s")))
        .getConfig();
    assertThat(c.balancer().policy()).isEqualTo(BalancerConfig.Policy.POWER_OF_TWO);
    assertThat(c.balancer().localZone()).isEqualTo("eu-1a");
    assertThat(c.outlier().consecutiveLocalOriginFailure()).isEqualTo(3);
    assertThat(c.outlier().baseEjectionTime()).isEqualTo(Duration.ofMillis(2500));
  }

  @Test
  void thePolicyConfigTakesThePanicThresholdAndSlowStartWithEnvoysNames() {
    MusterLoadBalancerProvider p = new MusterLoadBalancerProvider();
    assertThat(MusterLoadBalancerProvider.Config.defaults().balancer().healthyPanicThreshold()).isEqualTo(50);
    assertThat(MusterLoadBalancerProvider.Config.defaults().balancer().slowStartWindow()).isZero();
    MusterLoadBalancerProvider.Config c = (MusterLoadBalancerProvider.Config) p.parseLoadBalancingPolicyConfig(
        Map.of("healthyPanicThreshold", 30.0, "slowStartConfig", Map.of("slowStartWindow", "20s", "aggression",
            2.0, "minWeightPercent", 5.0))).getConfig();
    assertThat(c.balancer().healthyPanicThreshold()).isEqualTo(30);
    assertThat(c.balancer().slowStartWindow()).isEqualTo(Duration.ofSeconds(20));
    assertThat(c.balancer().slowStartAggression()).isEqualTo(2.0);
    assertThat(c.balancer().slowStartMinWeightPercent()).isEqualTo(5);
    assertThat(p.parseLoadBalancingPolicyConfig(Map.of("healthyPanicThreshold", 120.0)).getError().getDescription())
        .contains("healthyPanicThreshold");
    assertThat(p.parseLoadBalancingPolicyConfig(Map.of("slowStartConfig", Map.of("window", "1s"))).getError()
        .getDescription()).contains("unknown field slowStartConfig.window");
  }

  @Test
  void aBadPolicyConfigIsAnInvalidArgumentNamingTheField() {
    MusterLoadBalancerProvider p = new MusterLoadBalancerProvider();
    ConfigOrError bad = p.parseLoadBalancingPolicyConfig(Map.of("localzone", "x"));
    assertThat(bad.getError().getCode()).isEqualTo(Status.Code.INVALID_ARGUMENT);
    assertThat(bad.getError().getDescription()).contains("unknown field localzone");
    assertThat(p.parseLoadBalancingPolicyConfig(Map.of("minLocalShare", 2.0)).getError().getDescription())
        .contains("minLocalShare");
    assertThat(p.parseLoadBalancingPolicyConfig(Map.of("outlierDetection", Map.of("baseEjectionTime", "30")))
        .getError().getDescription()).contains("ending in s");
    assertThat(p.parseLoadBalancingPolicyConfig(Map.of("policy", List.of())).getError()).isNotNull();
  }

  @Test
  void theServiceLoaderFindsTheResolverAndThePolicy() {
    assertThat(io.grpc.NameResolverRegistry.getDefaultRegistry().getProviderForScheme("muster"))
        .isInstanceOf(MusterNameResolverProvider.class);
    assertThat(io.grpc.LoadBalancerRegistry.getDefaultRegistry().getProvider("muster"))
        .isInstanceOf(MusterLoadBalancerProvider.class);
  }

  @Test
  void drainingInstancesAreLeftOutAndEachGroupCarriesItsInstancesAttributes() {
    dev.muster.registry.Instance up = dev.muster.registry.Instance.of("echo", "127.0.0.1", 7001).id("up")
        .weight(250).zone("z1").region("r1").tag("canary").meta("build", "42");
    dev.muster.registry.Instance draining = dev.muster.registry.Instance.of("echo", "127.0.0.1", 7002).id("dr")
        .state(dev.muster.registry.InstanceState.DRAINING);
    List<io.grpc.EquivalentAddressGroup> groups = MusterNameResolver.groups(
        dev.muster.cache.EndpointSet.of(7, List.of(up, draining)));
    assertThat(groups).hasSize(1);
    io.grpc.Attributes a = groups.get(0).getAttributes();
    assertThat(a.get(MusterAttributes.INSTANCE_ID)).isEqualTo("up");
    assertThat(a.get(MusterAttributes.WEIGHT)).isEqualTo(250);
    assertThat(a.get(MusterAttributes.ZONE)).isEqualTo("z1");
    assertThat(a.get(MusterAttributes.REGION)).isEqualTo("r1");
    assertThat(a.get(MusterAttributes.TAGS)).containsExactly("canary");
    assertThat(a.get(MusterAttributes.METADATA)).containsEntry("build", "42");
    assertThat(groups.get(0).getAddresses()).containsExactly(new java.net.InetSocketAddress("127.0.0.1", 7001));
  }
}
