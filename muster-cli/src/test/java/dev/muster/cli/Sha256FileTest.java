package dev.muster.cli;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class Sha256FileTest {
  private static final String ABC = "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad";

  @TempDir
  Path dir;

  @Test
  void theLineIsWhatSha256sumPrintsHexTwoSpacesAndTheBareName() {
    assertThat(Sha256File.line(ABC, "etcd.snapshot")).isEqualTo(ABC + "  etcd.snapshot\n");
  }

  @Test
  void theDigestOfAFileIsItsSha256InLowerCaseHex() throws IOException {
    Path file = Files.write(dir.resolve("abc"), "abc".getBytes(StandardCharsets.US_ASCII));
    assertThat(Sha256File.of(file)).isEqualTo(ABC);
  }

  @Test
  void aLineWrittenIsReadBackAndBinaryModeAndUpperCaseAreReadToo() {
    Path file = dir.resolve("s.db.sha256");
    assertThat(Sha256File.parse(Sha256File.line(ABC, "s.db"), file)).isEqualTo(new Sha256File.Entry(ABC, "s.db"));
    assertThat(Sha256File.parse(ABC.toUpperCase() + " *s.db\n", file)).isEqualTo(new Sha256File.Entry(ABC, "s.db"));
  }

  @Test
  void somethingElseIsAUsageErrorQuotingWhatItReads() {
    assertThatThrownBy(() -> Sha256File.parse("not a checksum\n", dir.resolve("s.db.sha256")))
        .isInstanceOf(Errors.UsageException.class)
        .hasMessage(dir.resolve("s.db.sha256") + " is not a sha256sum line (HEX  NAME): it reads \"not a checksum\"");
  }

  @Test
  void theChecksumFileSitsBesideTheSnapshotAndIsAbsentWhenNotWritten() {
    Path snapshot = dir.resolve("s.db");
    assertThat(Sha256File.beside(snapshot)).isEqualTo(dir.resolve("s.db.sha256"));
    assertThat(Sha256File.read(snapshot)).isEmpty();
  }
}
