package dev.muster.console.internal;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import dev.muster.cache.EndpointSet;
import dev.muster.etcd.EtcdMaintenance;
import dev.muster.registry.Instance;
import dev.muster.registry.InstanceState;
import java.net.URI;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

class ViewsTest {
  private static final Instant NOW = Instant.parse("2026-12-01T10:00:10Z");
  private final Instance a = Instance.of("shop", "10.0.0.1", 80).id("a").zone("z1").tag("blue")
      .meta("note", "<img src=x onerror=alert(1)>");
  private final Instance b = Instance.of("shop", "10.0.0.2", 81).id("b").version("v2")
      .state(InstanceState.DRAINING);

  @Test
  void theOverviewCountsInstancesByStateAndVersion() {
    JsonNode o = Views.overview(List.of("default", "empty"), List.of(
        new Views.ServiceSummary("default", "shop", EndpointSet.of(7, List.of(a, b)), false)));
    JsonNode shop = o.at("/namespaces/0/services/0");
    assertThat(shop.get("name").asText()).isEqualTo("shop");
    assertThat(shop.get("instances").asInt()).isEqualTo(2);
    assertThat(shop.get("revision").asLong()).isEqualTo(7);
    assertThat(shop.get("byState").toString()).isEqualTo("{\"DRAINING\":1,\"UP\":1}");
    assertThat(shop.get("byVersion").toString()).isEqualTo("{\"v1\":1,\"v2\":1}");
    assertThat(o.at("/namespaces/1/services").size()).isZero();
  }

  @Test
  void aServiceCarriesValuesAsTheyAreAndTheTtlLeftCountsDown() {
    EtcdReader.ServiceLeases leases = new EtcdReader.ServiceLeases(Map.of(a.key().path(),
        new EtcdReader.LeaseInfo(0x1f, Duration.ofSeconds(10), Duration.ofSeconds(8), NOW.minusSeconds(3))),
        NOW.minusSeconds(3), null);
    JsonNode s = Views.service("default", "shop", EndpointSet.of(9, List.of(a, b)), true, leases, true, NOW);
    JsonNode first = s.at("/instances/0");
    assertThat(first.get("metadata").get("note").asText()).isEqualTo("<img src=x onerror=alert(1)>");
    assertThat(first.get("address").asText()).isEqualTo("10.0.0.1:80");
    assertThat(first.get("zone").asText()).isEqualTo("z1");
    assertThat(first.get("tags").get(0).asText()).isEqualTo("blue");
    assertThat(first.get("lease").asText()).isEqualTo("1f");
    assertThat(first.get("ttlLeft").asLong()).isEqualTo(5);
    assertThat(first.get("ttlGranted").asLong()).isEqualTo(10);
    JsonNode second = s.at("/instances/1");
    assertThat(second.get("state").asText()).isEqualTo("DRAINING");
    assertThat(second.has("lease")).as("not read yet").isFalse();
  }

  @Test
  void leaseIdsAreLeftOutUnlessAskedForAndTheTtlStays() {
    EtcdReader.ServiceLeases leases = new EtcdReader.ServiceLeases(Map.of(a.key().path(),
        new EtcdReader.LeaseInfo(0x1f, Duration.ofSeconds(10), Duration.ofSeconds(8), NOW.minusSeconds(3))),
        NOW.minusSeconds(3), null);
    JsonNode first = Views.service("default", "shop", EndpointSet.of(9, List.of(a)), true, leases, false, NOW)
        .at("/instances/0");
    assertThat(first.has("lease")).isFalse();
    assertThat(first.get("ttlLeft").asLong()).isEqualTo(5);
  }

  @Test
  void theBannerGivesTheStaleAgeInWholeSeconds() {
    assertThat(Views.banner(null, null, NOW).toString()).isEqualTo("{\"stale\":false}");
    JsonNode b = Views.banner(NOW.minusMillis(4900), "etcd down", NOW);
    assertThat(b.get("staleSeconds").asLong()).isEqualTo(4);
    assertThat(b.get("reason").asText()).isEqualTo("etcd down");
  }

  @Test
  void theClusterNamesTheLeaderAndTheDbShareOfTheQuota() {
    EtcdMaintenance.MemberStatus up = new EtcdMaintenance.MemberStatus(URI.create("http://127.0.0.1:2379"), null, false,
        "aa", "3.4.23", 512L * 1024 * 1024, 100, "aa", 2, 14, 14, false, List.of());
    EtcdMaintenance.MemberStatus down = EtcdMaintenance.MemberStatus.failed(URI.create("http://127.0.0.1:2389"),
        "DEADLINE_EXCEEDED");
    EtcdReader.Cluster c = new EtcdReader.Cluster(List.of(up, down),
        List.of(new EtcdMaintenance.Member("aa", "m0", List.of(), List.of(), false)),
        List.of(new EtcdMaintenance.Alarm("aa", "NOSPACE")), 42, NOW, null);
    JsonNode j = Views.cluster(c, 2L * 1024 * 1024 * 1024);
    assertThat(j.get("leader").asText()).isEqualTo("aa (m0)");
    assertThat(j.at("/members/0/dbPercent").asDouble()).isEqualTo(25.0);
    assertThat(j.at("/members/0/leader").asBoolean()).isTrue();
    assertThat(j.at("/members/1/failure").asText()).isEqualTo("DEADLINE_EXCEEDED");
    assertThat(j.at("/alarms/0/type").asText()).isEqualTo("NOSPACE");
    assertThat(j.get("revision").asLong()).isEqualTo(42);
    assertThat(Views.cluster(null, 1).get("loading").asBoolean()).isTrue();
  }
}
