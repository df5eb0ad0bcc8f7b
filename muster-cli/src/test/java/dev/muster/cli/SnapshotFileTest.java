package dev.muster.cli;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.IOException;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class SnapshotFileTest {
  @TempDir
  Path dir;

  private final PrintWriter progress = new PrintWriter(new StringWriter());

  @Test
  void aWriteLeavesTheFileAndItsChecksumAndNoTemporaryFile() throws IOException {
    Path target = dir.resolve("s.db");
    SnapshotFile.Saved saved = SnapshotFile.write(target, false, progress, out -> write(out, "snapshot"));
    assertThat(saved.bytes()).isEqualTo(8);
    assertThat(Files.readString(target)).isEqualTo("snapshot");
    assertThat(saved.sha256()).isEqualTo(Sha256File.of(target));
    assertThat(Files.readString(dir.resolve("s.db.sha256"))).isEqualTo(Sha256File.line(saved.sha256(), "s.db"));
    try (var files = Files.list(dir)) {
      assertThat(files.map(p -> p.getFileName().toString())).containsExactlyInAnyOrder("s.db", "s.db.sha256");
    }
  }

  @Test
  void anExistingFileIsRefusedBeforeAnythingIsStreamedAndReplacedWithForce() throws IOException {
    Path target = Files.writeString(dir.resolve("s.db"), "old");
    assertThatThrownBy(() -> SnapshotFile.write(target, false, progress, out -> write(out, "new")))
        .isInstanceOf(Errors.UsageException.class).hasMessage(target + " exists: choose another name, or --force to"
            + " replace it");
    SnapshotFile.write(target, true, progress, out -> write(out, "new"));
    assertThat(Files.readString(target)).isEqualTo("new");
  }

  @Test
  void aFailedStreamRemovesTheTemporaryFileAndKeepsTheOldSnapshotAndChecksum() throws IOException {
    Path target = dir.resolve("s.db");
    SnapshotFile.write(target, false, progress, out -> write(out, "old"));
    String oldSum = Files.readString(dir.resolve("s.db.sha256"));
    assertThatThrownBy(() -> SnapshotFile.write(target, true, progress, out -> {
      write(out, "half");
      throw new UncheckedIOException(new IOException("etcd went away"));
    })).hasMessageContaining("etcd went away");
    assertThat(Files.readString(target)).isEqualTo("old");
    assertThat(Files.readString(dir.resolve("s.db.sha256"))).isEqualTo(oldSum);
    assertThat(dir.resolve("s.db.tmp")).doesNotExist();
  }

  @Test
  void aDirectoryOrAMissingDirectoryIsAOneLineUsageError() {
    assertThatThrownBy(() -> SnapshotFile.checkTarget(dir, false)).isInstanceOf(Errors.UsageException.class)
        .hasMessageStartingWith(dir + " is a directory: give the snapshot's file name");
    Path nowhere = dir.resolve("no-such-dir").resolve("s.db");
    assertThatThrownBy(() -> SnapshotFile.checkTarget(nowhere, false)).isInstanceOf(Errors.UsageException.class)
        .hasMessage("cannot write " + nowhere + ": directory " + nowhere.getParent() + " does not exist");
  }

  private static long write(java.io.OutputStream out, String text) {
    try {
      out.write(text.getBytes(java.nio.charset.StandardCharsets.US_ASCII));
      return text.length();
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }
}
