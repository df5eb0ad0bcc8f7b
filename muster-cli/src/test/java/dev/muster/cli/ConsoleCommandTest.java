package dev.muster.cli;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import org.junit.jupiter.api.Test;

class ConsoleCommandTest {
  @Test
  void theListenAddressMustBeAnIpLiteral() {
    assertThat(HostPort.listenAddress("127.0.0.1:0", "8080").getPort()).isZero();
    assertThatThrownBy(() -> HostPort.listenAddress("localhost:8080", "8080"))
        .hasMessageContaining("127.0.0.1:8080").hasMessageContaining("not a host name");
  }
}
