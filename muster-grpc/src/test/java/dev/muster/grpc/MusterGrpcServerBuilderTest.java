package dev.muster.grpc;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.muster.InvalidInputException;
import dev.muster.etcd.EtcdConfig;
import dev.muster.etcd.EtcdRegistry;
import dev.muster.registry.RegistrarConfig;
import io.grpc.netty.NettyServerBuilder;
import java.net.InetSocketAddress;
import java.time.Duration;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/** What {@link MusterGrpcServer.Builder#build()} refuses, before any server is built or etcd contacted. */
class MusterGrpcServerBuilderTest {
  private final EtcdRegistry registry = EtcdRegistry.connect(EtcdConfig.of("http://127.0.0.1:1")); // never called

  @AfterEach
  void close() {
    registry.close();
  }

  private MusterGrpcServer.Builder builder() {
    return MusterGrpcServer.builder(registry, NettyServerBuilder.forAddress(new InetSocketAddress("127.0.0.1", 0)));
  }

  @Test
  void serviceAndAddressAreRequiredAndNamed() {
    assertThatThrownBy(() -> builder().address("127.0.0.1").build()).isInstanceOf(InvalidInputException.class)
        .hasMessageContaining("service is missing");
    assertThatThrownBy(() -> builder().service("orders").build()).isInstanceOf(InvalidInputException.class)
        .hasMessageContaining("address is missing");
  }

  @Test
  void aBadInstanceFieldFailsAtBuildNotAtStart() {
    assertThatThrownBy(() -> builder().service("Orders_API").address("127.0.0.1").build())
        .isInstanceOf(InvalidInputException.class).hasMessageContaining("service");
    assertThatThrownBy(() -> builder().service("orders").address("127.0.0.1").weight(-1).build())
        .isInstanceOf(InvalidInputException.class).hasMessageContaining("weight");
  }

  @Test
  void aNegativeDrainOrDeadlineIsRefusedNamingIt() {
    assertThatThrownBy(() -> builder().service("orders").address("127.0.0.1").drain(Duration.ofSeconds(-1)).build())
        .isInstanceOf(InvalidInputException.class).hasMessageContaining("drain");
    assertThatThrownBy(() -> builder().service("orders").address("127.0.0.1")
        .shutdownDeadline(Duration.ofSeconds(-1)).build())
        .isInstanceOf(InvalidInputException.class).hasMessageContaining("shutdownDeadline");
  }

  @Test
  void theDrainOverridesTheRegistrarConfigsAndNothingElseOfIt() {
    RegistrarConfig given = RegistrarConfig.builder().ttl(Duration.ofSeconds(6)).build();
    MusterGrpcServer.Builder b = builder().service("orders").address("127.0.0.1").registrar(given)
        .drain(Duration.ofMillis(300));
    RegistrarConfig used = b.registrarConfig();
    assertThat(used.drain()).isEqualTo(Duration.ofMillis(300));
    assertThat(used.ttl()).isEqualTo(given.ttl());
    assertThat(used.keepaliveInterval()).isEqualTo(given.keepaliveInterval());
    assertThat(used.shutdownHook()).isTrue();
    assertThat(b.build().state()).isEqualTo(MusterGrpcServer.State.NEW);
  }
}
