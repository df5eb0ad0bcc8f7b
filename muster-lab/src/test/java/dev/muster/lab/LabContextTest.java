package dev.muster.lab;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.io.OutputStream;
import java.io.PrintStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** A scenario's directory holds only this run's files. */
class LabContextTest {
  @Test
  void aScenarioStartsWithAnEmptyDirectoryEvenWhenAnEarlierRunLeftFilesThere(@TempDir Path out) throws IOException {
    // What a previous run of forged_registration and tls_auth_round_trip left: the next keygen refused to
    // overwrite p1.key, and the old certificates failed the new etcd's TLS handshake.
    Path dir = out.resolve("forged_registration");
    Files.createDirectories(dir.resolve("pki"));
    Files.writeString(dir.resolve("p1.key"), "an old key");
    Files.writeString(dir.resolve("pki/ca.pem"), "an old CA");
    Path sibling = Files.writeString(out.resolve("output.txt"), "another scenario's or the run's file");

    try (LabContext ctx = new LabContext(LabParams.seed(), dir, List.of("muster"),
        new PrintStream(OutputStream.nullOutputStream()))) {
      assertThat(ctx.dir()).isDirectory();
      try (var files = Files.list(ctx.dir())) {
        assertThat(files).isEmpty();
      }
    }
    assertThat(sibling).hasContent("another scenario's or the run's file");
  }
}
