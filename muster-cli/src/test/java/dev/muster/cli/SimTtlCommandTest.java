package dev.muster.cli;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.PrintWriter;
import java.io.StringWriter;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** {@code muster sim ttl} in-process: seed 003's table with its defaults, the CSV, and bad input in one line. */
class SimTtlCommandTest {
  private final StringWriter out = new StringWriter();
  private final StringWriter err = new StringWriter();

  private int run(String... args) {
    return Main.run(args, new PrintWriter(out, true), new PrintWriter(err, true));
  }

  @Test
  void withTheDefaultsItPrintsSeed003sTableBesideMustersAndWritesTheSameRowsAsCsv(@TempDir Path dir)
      throws Exception {
    Path csv = dir.resolve("ttl.csv");
    assertThat(run("sim", "ttl", "--csv", csv.toString())).as("%s", err).isZero();
    String text = out.toString();
    assertThat(text).contains("seed 7").contains("seed 003's model: heartbeat 5s").contains("Muster's model");
    assertThat(text).contains("TTL=15s  P50=12.5s").contains("TTL=30s  P50=27.5s").contains("TTL=60s  P50=57.5s")
        .contains("(exact 12.50/14.95/15.00s)").contains("(exact 57.50/59.95/60.00s)");
    // The seed's columns (%-6.1f %-10.0f %-14.2f %-14.0f), its figures within Monte Carlo error (TtlSimTest).
    assertThat(text).containsPattern("(?m)^1\\.0    15         0\\.6\\d           2\\d\\d ")
        .containsPattern("(?m)^1\\.5    15         23\\.\\d\\d          8\\d\\d\\d ")
        .containsPattern("(?m)^1\\.5    60         1\\.4\\d           5\\d\\d ");
    assertThat(text).contains("keepalive 20s: 50 writes/s").contains("× seed");
    assertThat(text).endsWith("wrote " + csv + System.lineSeparator());

    List<String> rows = Files.readAllLines(csv);
    assertThat(rows).hasSize(1 + 2 * 3 * 2);
    assertThat(rows.get(0)).startsWith("model,ttl_s,interval_s,sigma,delay_p50_s");
    assertThat(rows.get(1)).startsWith("seed 003,15,5,1,12.");
    assertThat(rows).anySatisfy(r -> assertThat(r).startsWith("Muster,60,20,1.5,50."));
  }

  @Test
  void theSeedAndTheSampleSizesArePrintedAndRepeatable() {
    assertThat(run("sim", "ttl", "--seed", "3", "--samples", "1000", "--delay-samples", "100")).isZero();
    String first = out.toString();
    out.getBuffer().setLength(0);
    assertThat(run("sim", "ttl", "--seed", "3", "--samples", "1000", "--delay-samples", "100")).isZero();
    assertThat(out.toString()).isEqualTo(first).contains("seed 3: 1000 pause samples per row, 100 delay samples");
  }

  @Test
  void badInputExitsTwoWithOneLineNamingTheFlagAndTheValue() {
    assertRefused("--ttl \"0s\" is invalid", "--ttl", "0s");
    assertRefused("'-15s' is not a duration", "--ttl", "-15s");
    assertRefused("--ttl \"5s\" is invalid: use a TTL above the heartbeat (5s)", "--ttl", "5s,15s");
    assertRefused("--sigma 0.0 is invalid: use a number above 0", "--sigma", "0");
    assertRefused("--sigma -1.5 is invalid", "--sigma", "1.0,-1.5");
    assertRefused("--instances 0 is invalid: use 1 or more", "--instances", "0");
    assertRefused("--keepalive \"15s\" is invalid", "--keepalive", "15s");
    assertRefused("--validate-ttl \"2500ms\" is invalid: use whole seconds", "--validate", "--validate-ttl", "2500ms");
  }

  @Test
  void simAlonePrintsItsUsage() {
    assertThat(run("sim")).isZero();
    assertThat(out.toString()).contains("Usage: muster sim").contains("ttl");
  }

  private void assertRefused(String message, String... flags) {
    out.getBuffer().setLength(0);
    err.getBuffer().setLength(0);
    String[] args = new String[flags.length + 2];
    args[0] = "sim";
    args[1] = "ttl";
    System.arraycopy(flags, 0, args, 2, flags.length);
    assertThat(run(args)).as("exit of %s", String.join(" ", args)).isEqualTo(2);
    assertThat(err.toString().strip()).as("%s", String.join(" ", args)).doesNotContain("\n").contains(message)
        .startsWith("muster: ");
    assertThat(out.toString()).isEmpty();
  }
}
