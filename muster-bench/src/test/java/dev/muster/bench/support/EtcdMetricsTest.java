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
  void aMethodEtcdNeverCountedIsAnErrorNotZero() {
    assertThatThrownBy(() -> EtcdMetrics.received(BODY, "Watch")).isInstanceOf(BenchException.class)
        .hasMessageContaining("Watch");
  }
}
