package dev.muster.grpc;

import static org.assertj.core.api.Assertions.assertThat;

import dev.muster.grpc.echo.Echo;
import dev.muster.registry.Instance;
import io.grpc.CallOptions;
import io.grpc.LoadBalancer.PickSubchannelArgs;
import io.grpc.LoadBalancer.SubchannelPicker;
import io.grpc.Metadata;
import io.grpc.MethodDescriptor;
import java.net.InetSocketAddress;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import org.junit.jupiter.api.Test;

/**
 * The fixture muster-bench's GrpcPickBenchmark measures through must be what the balancer would publish: a picker
 * that hands out the READY subchannels, and a retry option the picker honours (it never picks the avoided endpoint
 * while another is READY). Otherwise the benchmark's figures would be of something else.
 */
class PickerFixtureTest {
  private final List<Instance> instances = List.of(
      Instance.of("echo", "10.0.0.1", 8080).id("i0"),
      Instance.of("echo", "10.0.0.2", 8080).id("i1"),
      Instance.of("echo", "10.0.0.3", 8080).id("i2"));

  @Test
  void aFirstAttemptGetsEveryReadyInstanceAndARetryNeverTheOneItAvoids() {
    SubchannelPicker picker = PickerFixture.ready(instances);
    Set<Integer> first = new HashSet<>();
    Set<Integer> retried = new HashSet<>();
    PickSubchannelArgs retry = args(PickerFixture.retryAvoiding(CallOptions.DEFAULT, instances.get(0).key()));
    for (int i = 0; i < 600; i++) {
      first.add(lastOctet(picker.pickSubchannel(args(CallOptions.DEFAULT))));
      retried.add(lastOctet(picker.pickSubchannel(retry)));
    }
    assertThat(first).containsExactlyInAnyOrder(1, 2, 3);
    assertThat(retried).containsExactlyInAnyOrder(2, 3);
  }

  private static int lastOctet(io.grpc.LoadBalancer.PickResult result) {
    assertThat(result.getStatus().isOk()).isTrue();
    InetSocketAddress a = (InetSocketAddress) result.getSubchannel().getAllAddresses().get(0).getAddresses().get(0);
    return a.getAddress().getAddress()[3];
  }

  private static PickSubchannelArgs args(CallOptions options) {
    return new PickSubchannelArgs() {
      @Override
      public CallOptions getCallOptions() {
        return options;
      }

      @Override
      public Metadata getHeaders() {
        return new Metadata();
      }

      @Override
      public MethodDescriptor<?, ?> getMethodDescriptor() {
        return Echo.SAY;
      }
    };
  }
}
