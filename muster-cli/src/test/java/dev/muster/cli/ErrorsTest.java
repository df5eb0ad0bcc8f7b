package dev.muster.cli;

import static org.assertj.core.api.Assertions.assertThat;

import dev.muster.DuplicateInstanceException;
import dev.muster.ErrorCode;
import dev.muster.RegistryUnavailableException;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.time.Duration;
import org.junit.jupiter.api.Test;
import picocli.CommandLine;

class ErrorsTest {

  @Test
  void libraryErrorCodesMapToTheExitCodesOfSpecSection7() {
    assertThat(Errors.exitCode(ErrorCode.INVALID_INPUT)).isEqualTo(2);
    assertThat(Errors.exitCode(ErrorCode.DUPLICATE_INSTANCE)).isEqualTo(3);
    assertThat(Errors.exitCode(ErrorCode.REGISTRY_UNAVAILABLE)).isEqualTo(4);
    assertThat(Errors.exitCode(ErrorCode.NO_ENDPOINT)).isEqualTo(1);
    assertThat(Errors.exitCode(ErrorCode.LEASE_LOST)).isEqualTo(1);
    assertThat(Errors.exitCode(ErrorCode.INTERNAL)).isEqualTo(1);
  }

  @Test
  void anUnreachableRegistryGetsTheCommandLinesAdviceOnOneLine() {
    StringWriter err = new StringWriter();
    CommandLine cmd = new CommandLine(new Main()).setErr(new PrintWriter(err, true));

    int code = Errors.onFailure(new RegistryUnavailableException("etcd at [http://127.0.0.1:1] did not answer",
        null), cmd, null);

    assertThat(code).isEqualTo(4);
    assertThat(err.toString().strip()).doesNotContain("\n")
        .startsWith("muster: etcd at [http://127.0.0.1:1] did not answer")
        .contains("./muster etcd").contains("--endpoints");
  }

  @Test
  void aDuplicateIdPointsAtTheIdFlag() {
    StringWriter err = new StringWriter();
    CommandLine cmd = new CommandLine(new Main()).setErr(new PrintWriter(err, true));

    int code = Errors.onFailure(new DuplicateInstanceException("/muster/default/orders/v1/a", 1L,
        Duration.ofSeconds(3)), cmd, null);

    assertThat(code).isEqualTo(3);
    assertThat(err.toString()).contains("choose another instance id").contains("--id");
  }
}
