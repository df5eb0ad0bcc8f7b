package dev.muster.bench.support;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import org.junit.jupiter.api.Test;

class EtcdMetricsTest {
  private static final String BODY = String.join("\n",
      "# HELP grpc_server_msg_received_total Total number of RPC stream messages received on the server.",
      "# TYPE grpc_server_msg_received_total counter",
      "grpc_server_msg_received_total{grpc_method=\"LeaseGrant\",grpc_service=\"etcdserverpb.Lease\","
          + "grpc_type=\"unary\"} 12",
      "grpc_server_msg_received_total{grpc_method=\"LeaseKeepAlive\",grpc_service=\"etcdserverpb.Lease\","
          + "grpc_type=\"bidi_stream\"} 1.234e+06",
      "grpc_server_msg_received_total{grpc_method=\"LeaseKeepAlive\",grpc_service=\"other\","
          + "grpc_type=\"bidi_stream\"} 6",
      "grpc_server_msg_sent_total{grpc_method=\"LeaseKeepAlive\",grpc_service=\"etcdserverpb.Lease\","
          + "grpc_type=\"bidi_stream\"} 999",
      "");

  @Test
  void sumsTheReceivedCounterOfOneMethodOverItsLabelSets() {
    assertThat(EtcdMetrics.received(BODY, "LeaseKeepAlive")).isEqualTo(1_234_006);
    assertThat(EtcdMetrics.received(BODY, "LeaseGrant")).isEqualTo(12);
  }

  @Test
  void watchCountsOnlyTheWatchServiceNotGrpcHealthsMethodOfTheSameName() {
    String body = String.join("\n",
        "grpc_server_msg_received_total{grpc_method=\"Watch\",grpc_service=\"etcdserverpb.Watch\","
            + "grpc_type=\"bidi_stream\"} 10250",
        "grpc_server_msg_received_total{grpc_method=\"Watch\",grpc_service=\"grpc.health.v1.Health\","
            + "grpc_type=\"server_stream\"} 7",
        "grpc_server_started_total{grpc_method=\"Watch\",grpc_service=\"etcdserverpb.Watch\","
            + "grpc_type=\"bidi_stream\"} 10001",
        "grpc_server_started_total{grpc_method=\"Watch\",grpc_service=\"grpc.health.v1.Health\","
            + "grpc_type=\"server_stream\"} 3",
        "grpc_server_handled_total{grpc_code=\"Canceled\",grpc_method=\"Watch\",grpc_service=\"etcdserverpb.Watch\","
            + "grpc_type=\"bidi_stream\"} 99",
        "");
    assertThat(EtcdMetrics.watch(body)).isEqualTo(new EtcdMetrics.WatchCounts(10_250, 10_001));
  }

  @Test
  void watchCountersMissingFromTheBodyAreAnError() {
    assertThatThrownBy(() -> EtcdMetrics.watch(BODY)).isInstanceOf(BenchException.class)
        .hasMessageContaining("etcdserverpb.Watch");
  }

  @Test
  void aMethodEtcdNeverCountedIsAnErrorNotZero() {
    assertThatThrownBy(() -> EtcdMetrics.received(BODY, "Watch")).isInstanceOf(BenchException.class)
        .hasMessageContaining("Watch");
  }
}
