package dev.muster.cli;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import org.junit.jupiter.api.Test;
import picocli.CommandLine.TypeConversionException;

class ConsoleCommandTest {
  private final ConsoleCommand.SizeConverter size = new ConsoleCommand.SizeConverter();

  @Test
  void quotaSizesTakeBinaryAndDecimalUnits() {
    assertThat(size.convert("2GiB")).isEqualTo(2L * 1024 * 1024 * 1024);
    assertThat(size.convert("512MiB")).isEqualTo(512L * 1024 * 1024);
    assertThat(size.convert("8GB")).isEqualTo(8_000_000_000L);
    assertThat(size.convert("100000")).isEqualTo(100_000L);
    assertThat(size.convert("4 kib")).isEqualTo(4096L);
  }

  @Test
  void aBadSizeSaysHowToWriteOne() {
    for (String bad : new String[] {"2XB", "-1GiB", "0", "GiB", "99999999999TiB"}) {
      assertThatThrownBy(() -> size.convert(bad)).as(bad).isInstanceOf(TypeConversionException.class)
          .hasMessageContaining(bad).hasMessageContaining("2GiB");
    }
  }

  @Test
  void theListenAddressMustBeAnIpLiteral() {
    assertThat(HostPort.listenAddress("127.0.0.1:0", "8080").getPort()).isZero();
    assertThatThrownBy(() -> HostPort.listenAddress("localhost:8080", "8080"))
        .hasMessageContaining("127.0.0.1:8080").hasMessageContaining("not a host name");
  }
}
