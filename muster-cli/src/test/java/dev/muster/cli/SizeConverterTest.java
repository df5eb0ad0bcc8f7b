package dev.muster.cli;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import org.junit.jupiter.api.Test;
import picocli.CommandLine.TypeConversionException;

class SizeConverterTest {
  private final SizeConverter size = new SizeConverter();

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
  void sizesAreShownInTheLargestBinaryUnit() {
    assertThat(SizeConverter.show(512)).isEqualTo("512 B");
    assertThat(SizeConverter.show(20_480)).isEqualTo("20.0 KiB");
    assertThat(SizeConverter.show(3L << 29)).isEqualTo("1.5 GiB");
  }
}
