package dev.muster.console;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.muster.InvalidInputException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class ConsoleConfigTest {
  @Test
  void defaultsAreLoopbackReadOnlyAndEtcdsQuota() {
    ConsoleConfig c = ConsoleConfig.defaults();
    assertThat(c.listen().getAddress().isLoopbackAddress()).isTrue();
    assertThat(c.listen().getPort()).isEqualTo(8080);
    assertThat(c.allowDrain()).isFalse();
    assertThat(c.namespaces()).isEmpty();
    assertThat(c.quota()).isEqualTo(2L * 1024 * 1024 * 1024);
    assertThat(c.toBuilder().build()).isEqualTo(c);
    assertThat(c.token()).as("random per start").isNull();
    assertThat(c.showLeases()).isFalse();
    assertThat(c.allowedHosts()).isEmpty();
    assertThat(c.readTimeout()).isEqualTo(Duration.ofSeconds(10));
  }

  @Test
  void aTokenFileIsReadWhenOnlyItsOwnerMayReadIt(@TempDir Path dir) throws Exception {
    Path file = Files.writeString(dir.resolve("token"), "0123456789abcdef0123456789abcdef\n");
    Files.setPosixFilePermissions(file, PosixFilePermissions.fromString("rw-------"));
    ConsoleConfig c = ConsoleConfig.builder().tokenFile(file).build();
    assertThat(c.token()).isEqualTo("0123456789abcdef0123456789abcdef");
    assertThat(c.toString()).doesNotContain(c.token()).contains("token=(hidden)");

    Files.setPosixFilePermissions(file, PosixFilePermissions.fromString("rw-r--r--"));
    assertThatThrownBy(() -> ConsoleConfig.builder().tokenFile(file))
        .isInstanceOf(InvalidInputException.class).hasMessageContaining("open to others (rw-r--r--)")
        .hasMessageContaining("chmod 600 " + file);
    assertThatThrownBy(() -> ConsoleConfig.builder().tokenFile(dir.resolve("missing")))
        .isInstanceOf(InvalidInputException.class).hasMessageContaining("missing").hasMessageContaining("cannot be read");
  }

  @Test
  void aShortTokenIsRefusedWithoutShowingIt() {
    assertThatThrownBy(() -> ConsoleConfig.builder().token("secret12").build())
        .isInstanceOf(InvalidInputException.class).hasMessageContaining("at least 16 characters")
        .hasMessageNotContaining("secret12");
    assertThatThrownBy(() -> ConsoleConfig.builder().allowedHosts(List.of("bad host")).build())
        .isInstanceOf(InvalidInputException.class).hasMessageContaining("bad host");
    assertThatThrownBy(() -> ConsoleConfig.builder().readTimeout(Duration.ofMillis(1500)).build())
        .isInstanceOf(InvalidInputException.class).hasMessageContaining("readTimeout");
  }

  @Test
  void badValuesAreNamed() {
    assertThatThrownBy(() -> ConsoleConfig.builder().namespaces(List.of("Bad_ns")).build())
        .isInstanceOf(InvalidInputException.class).hasMessageContaining("Bad_ns");
    assertThatThrownBy(() -> ConsoleConfig.builder().quota(0).build())
        .isInstanceOf(InvalidInputException.class).hasMessageContaining("quota");
    assertThatThrownBy(() -> ConsoleConfig.builder().leaseRefresh(Duration.ZERO).build())
        .isInstanceOf(InvalidInputException.class).hasMessageContaining("leaseRefresh");
  }
}
