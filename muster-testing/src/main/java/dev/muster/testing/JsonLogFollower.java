package dev.muster.testing;

import com.fasterxml.jackson.databind.JsonNode;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.channels.Channels;
import java.nio.channels.FileChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.ArrayList;
import java.util.List;

/**
 * A JSON-lines file that is still being written, read from where the last read stopped: each {@link #read()} parses
 * only the lines written since, so a poll every few milliseconds costs what was added, not the whole log. The result is
 * the {@link JsonLog} that {@link JsonLog#read(Path)} would give at that moment, under the same rules.
 *
 * <p>Only whole lines (ending in a newline) are kept between reads. The last line, while it has no newline yet, is
 * read again every time and, if it is whole JSON already (a process that exited without one), counted in that read's
 * log only. A file that became shorter than what was read (rewritten) is read again from its start.
 *
 * <p>Thread-safe: {@link #read()} is synchronized; a read does file I/O under that lock, which is this object's own and
 * never taken by anything else.
 */
final class JsonLogFollower {
  private final Path file;
  private final List<JsonNode> lines = new ArrayList<>();
  private final List<String> otherLines = new ArrayList<>();
  private long consumed; // bytes of whole lines parsed into lines / otherLines

  JsonLogFollower(Path file) {
    this.file = file;
  }

  /** The log as written so far; a file that does not exist yet is an empty log. */
  synchronized JsonLog read() {
    byte[] added;
    try (FileChannel ch = FileChannel.open(file, StandardOpenOption.READ)) {
      if (ch.size() < consumed) {
        lines.clear();
        otherLines.clear();
        consumed = 0;
      }
      added = readFrom(ch, consumed);
    } catch (NoSuchFileException notYet) {
      return JsonLog.of(lines, otherLines);
    } catch (IOException e) {
      throw new UncheckedIOException("cannot read " + file + ": " + e.getMessage(), e);
    }
    int whole = lastNewline(added) + 1; // a newline byte is never inside a UTF-8 sequence
    if (whole > 0) {
      for (String line : new String(added, 0, whole, StandardCharsets.UTF_8).split("\r?\n", -1)) {
        JsonLog.classify(line, lines, otherLines);
      }
      consumed += whole;
    }
    if (whole == added.length) {
      return JsonLog.of(lines, otherLines);
    }
    List<JsonNode> withTail = new ArrayList<>(lines);
    List<String> otherWithTail = new ArrayList<>(otherLines);
    JsonLog.classify(new String(added, whole, added.length - whole, StandardCharsets.UTF_8), withTail, otherWithTail);
    return JsonLog.of(withTail, otherWithTail);
  }

  private static byte[] readFrom(FileChannel ch, long position) throws IOException {
    ch.position(position);
    return Channels.newInputStream(ch).readAllBytes();
  }

  private static int lastNewline(byte[] bytes) {
    for (int i = bytes.length - 1; i >= 0; i--) {
      if (bytes[i] == '\n') {
        return i;
      }
    }
    return -1;
  }
}
