package dev.muster.cli;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.PrintWriter;
import java.io.StringWriter;
import org.junit.jupiter.api.Test;

/** {@code muster dns}'s options as parsed, before anything connects: help and one-line refusals. */
class DnsCommandTest {
  private final StringWriter out = new StringWriter();
  private final StringWriter err = new StringWriter();

  private int run(String... args) {
    return Main.run(args, new PrintWriter(out, true), new PrintWriter(err, true));
  }

  @Test
  void helpNamesEveryExposureOption() {
    assertThat(run("dns", "--help")).isZero();
    assertThat(out.toString()).contains("--rate-limit", "--rrl-responses-per-second", "--slip", "--rrl-ipv4-prefix",
        "--rrl-ipv6-prefix", "--rrl-exempt", "--allow-from", "--txt-metadata", "--tcp-per-source", "--tcp-deadline",
        "RFC 8482");
  }

  @Test
  void aBadAllowFromIsRefusedInOneLineSayingWhatToWrite() {
    assertThat(run("dns", "--allow-from", "intranet")).isEqualTo(2);
    assertThat(err.toString().strip()).doesNotContain("\n").contains("intranet").contains("10.0.0.0/8");
  }

  @Test
  void aBlockWithHostBitsSaysWhichBlockWasMeant() {
    assertThat(run("dns", "--rrl-exempt", "10.1.2.3/8")).isEqualTo(2);
    assertThat(err.toString().strip()).doesNotContain("\n").contains("did you mean 10.0.0.0/8");
  }

  @Test
  void anRrlPrefixOutOfRangeIsRefusedInOneLine() {
    assertThat(run("dns", "--rrl-ipv4-prefix", "33", "--endpoints", "http://127.0.0.1:1")).isEqualTo(2);
    assertThat(err.toString().strip()).doesNotContain("\n").contains("33").contains("8 to 32");
  }
}
