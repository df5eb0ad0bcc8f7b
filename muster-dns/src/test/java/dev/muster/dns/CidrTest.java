package dev.muster.dns;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.muster.InvalidInputException;
import java.net.InetAddress;
import org.junit.jupiter.api.Test;

class CidrTest {
  @Test
  void blocksHoldTheirAddressesOnly() throws Exception {
    Cidr ten = Cidr.parse("10.0.0.0/8");
    assertThat(ten.contains(InetAddress.getByName("10.255.1.2"))).isTrue();
    assertThat(ten.contains(InetAddress.getByName("11.0.0.1"))).isFalse();
    assertThat(ten.contains(InetAddress.getByName("::1"))).isFalse();
    Cidr host = Cidr.parse("127.0.0.1");
    assertThat(host).hasToString("127.0.0.1/32");
    assertThat(host.contains(InetAddress.getByName("127.0.0.1"))).isTrue();
    assertThat(host.contains(InetAddress.getByName("127.0.0.2"))).isFalse();
    assertThat(Cidr.parse("fd00::/8").contains(InetAddress.getByName("fdab::1"))).isTrue();
    assertThat(Cidr.parse("0.0.0.0/0").contains(InetAddress.getByName("192.0.2.1"))).isTrue();
    assertThat(Cidr.parse("10.1.2.128/25").contains(InetAddress.getByName("10.1.2.127"))).isFalse();
  }

  @Test
  void badBlocksSayWhatToWrite() {
    assertThatThrownBy(() -> Cidr.parse("example.com")).isInstanceOf(InvalidInputException.class)
        .hasMessageContaining("example.com").hasMessageContaining("10.0.0.0/8");
    assertThatThrownBy(() -> Cidr.parse("10.0.0.0/33")).hasMessageContaining("0 to 32");
    assertThatThrownBy(() -> Cidr.parse("10.1.2.3/8")).hasMessageContaining("did you mean 10.0.0.0/8");
    assertThatThrownBy(() -> Cidr.parse("10.0.0.0/x")).isInstanceOf(InvalidInputException.class);
  }
}
