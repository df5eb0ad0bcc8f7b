package dev.muster.cli;

import static org.assertj.core.api.Assertions.assertThat;

import dev.muster.etcd.EtcdMaintenance.Alarm;
import dev.muster.etcd.EtcdMaintenance.LeaseTtl;
import dev.muster.etcd.EtcdMaintenance.MemberStatus;
import dev.muster.etcd.EtcdMaintenance.StoredKey;
import dev.muster.registry.InstanceState;
import dev.muster.registry.RegistryLayout;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.function.Function;
import org.junit.jupiter.api.Test;

class DoctorChecksTest {
  private static final long GIB = 1L << 30;
  private static final URI A = URI.create("http://127.0.0.1:1");
  private static final URI B = URI.create("http://127.0.0.1:2");
  private static final Function<URI, String> NAME = u -> u.equals(A) ? "m0" : "m1";

  private static MemberStatus member(URI endpoint, String id, String leader, long db, String version) {
    return new MemberStatus(endpoint, null, false, id, version, db, db, leader, 2, 10, 10, false, List.of());
  }

  @Test
  void aHealthyClusterHasNoFinding() {
    assertThat(DoctorChecks.cluster(List.of(member(A, "a", "a", 20_000, "3.4.23"),
        member(B, "b", "a", 20_000, "3.4.23")), NAME, List.of(), id -> id, 2 * GIB)).isEmpty();
  }

  @Test
  void aMemberThatDoesNotAnswerIsAnErrorNamingIt() {
    List<DoctorFinding> f = DoctorChecks.cluster(List.of(member(A, "a", "a", 1, "3.4.23"),
        MemberStatus.failed(B, "no answer within 3000 ms")), NAME, List.of(), id -> id, 2 * GIB);
    assertThat(f).singleElement().satisfies(x -> {
      assertThat(x.severity()).isEqualTo(DoctorFinding.Severity.ERROR);
      assertThat(x.what()).contains("m1", "does not answer", "3000 ms");
    });
  }

  @Test
  void noLeaderOrTwoLeadersAreErrors() {
    assertThat(DoctorChecks.cluster(List.of(member(A, "a", "0", 1, "3.4.23")), NAME, List.of(), id -> id, GIB))
        .extracting(DoctorFinding::what).containsExactly("no member has a leader");
    assertThat(DoctorChecks.cluster(List.of(member(A, "a", "a", 1, "3.4.23"), member(B, "b", "b", 1, "3.4.23")),
        NAME, List.of(), id -> id, GIB)).extracting(DoctorFinding::what)
        .containsExactly("members disagree on the leader (a, b)");
  }

  @Test
  void theDatabaseAgainstTheQuotaWarnsAbove80AndErrsAbove95Percent() {
    assertThat(DoctorChecks.cluster(List.of(member(A, "a", "a", (long) (0.79 * GIB), "3.4.23")), NAME, List.of(),
        id -> id, GIB)).isEmpty();
    assertThat(DoctorChecks.cluster(List.of(member(A, "a", "a", (long) (0.81 * GIB), "3.4.23")), NAME, List.of(),
        id -> id, GIB)).singleElement().satisfies(x -> {
          assertThat(x.severity()).isEqualTo(DoctorFinding.Severity.WARNING);
          assertThat(x.what()).contains("81 %", "1.0 GiB quota");
        });
    assertThat(DoctorChecks.cluster(List.of(member(A, "a", "a", (long) (0.96 * GIB), "3.4.23")), NAME, List.of(),
        id -> id, GIB)).singleElement().extracting(DoctorFinding::severity)
        .isEqualTo(DoctorFinding.Severity.ERROR);
  }

  @Test
  void alarmsAreErrorsAndMixedVersionsAWarning() {
    List<DoctorFinding> f = DoctorChecks.cluster(List.of(member(A, "a", "a", 1, "3.4.23"),
        member(B, "b", "a", 1, "3.5.9")), NAME, List.of(new Alarm("b", "NOSPACE")), id -> id.equals("b") ? "m1" : id,
        GIB);
    assertThat(f).extracting(DoctorFinding::what).containsExactlyInAnyOrder(
        "members run different etcd versions (3.4.23, 3.5.9)", "alarm NOSPACE raised on member m1");
  }

  @Test
  void seed001sLagThresholdMakesAMemberBehindMoreThanTheLimitAnError() {
    List<DoctorFinding> f = DoctorChecks.lag(List.of(new DoctorChecks.Lag(A, 100, 100, Duration.ofMillis(300)),
        new DoctorChecks.Lag(B, 100, 40, null)), NAME, Duration.ofSeconds(1), Duration.ofSeconds(10));
    assertThat(f).singleElement().satisfies(x -> {
      assertThat(x.severity()).isEqualTo(DoctorFinding.Severity.ERROR);
      assertThat(x.what()).contains("m1", "more than 10s", "applied index 40", "leader committed 100");
    });
    assertThat(DoctorChecks.lag(List.of(new DoctorChecks.Lag(A, 100, 100, Duration.ofSeconds(2))), NAME,
        Duration.ofSeconds(1), Duration.ofSeconds(10))).singleElement().extracting(DoctorFinding::severity)
        .isEqualTo(DoctorFinding.Severity.WARNING);
  }

  private static StoredKey key(String key, String value, long lease) {
    return new StoredKey(key, value.getBytes(StandardCharsets.UTF_8), lease, 1, 1, 1);
  }

  private static final String GOOD = "{\"schema\":1,\"address\":\"127.0.0.1\",\"port\":80,\"state\":\"UP\"}";

  @Test
  void theLayoutCountsInstancesByStateAndNamesEveryBadKey() {
    List<StoredKey> keys = List.of(
        key("/muster/default/orders/v1/a", GOOD, 7),
        key("/muster/default/orders/v2/a", GOOD.replace("UP", "DRAINING"), 8),
        key("/muster/default/orders/v1/bad", "{\"port\":\"x\"}", 9),
        key("/muster/default/orders/v1/forever", GOOD, 0),
        key("/muster/junk", "x", 0),
        key("/muster/default/pay/v1/late", GOOD, 10));
    Map<Long, Optional<LeaseTtl>> leases = Map.of(
        7L, Optional.of(new LeaseTtl(7, Duration.ofSeconds(15), Duration.ofSeconds(14))),
        10L, Optional.of(new LeaseTtl(10, Duration.ofSeconds(15), Duration.ofSeconds(4))));
    DoctorChecks.LayoutReport r = DoctorChecks.layout(RegistryLayout.defaults(), keys, leases);
    assertThat(r.keys()).isEqualTo(6);
    assertThat(r.leases()).isEqualTo(4);
    assertThat(r.services()).extracting(DoctorChecks.ServiceCount::service)
        .containsExactly("default/orders", "default/pay");
    assertThat(r.services().get(0).states()).containsEntry(InstanceState.UP, 2)
        .containsEntry(InstanceState.DRAINING, 1);
    assertThat(r.services().get(0).versions()).containsExactly("v1", "v2");
    assertThat(r.findings()).allMatch(x -> x.severity() == DoctorFinding.Severity.WARNING)
        .extracting(DoctorFinding::what).satisfiesExactlyInAnyOrder(
            w -> assertThat(w).startsWith("/muster/default/orders/v1/bad has a malformed value"),
            w -> assertThat(w).isEqualTo("/muster/default/orders/v1/forever has no lease: it never expires"),
            w -> assertThat(w).startsWith("/muster/junk is not an instance key"),
            w -> assertThat(w).isEqualTo("/muster/default/pay/v1/late's lease a has 4s of 15s left"),
            w -> assertThat(w).startsWith("instance id default/orders/a is registered under 2 versions (v1, v2)"));
  }
}
