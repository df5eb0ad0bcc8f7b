package dev.muster.testing;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import java.io.IOException;
import java.io.OutputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.List;
import java.util.Random;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class JsonLogFollowerTest {
  /** Multi-byte characters, a half-written-looking line, other lines, and a last line without a newline. */
  private static final String TEXT = String.join("\n",
      "{\"event\":\"registered\",\"ts\":\"2026-11-29T21:30:00.000000Z\",\"detail\":\"zone é-1, ☃ snow\"}",
      "a banner line",
      "",
      "{\"event\":\"keepalive\",\"ts\":\"2026-11-29T21:30:01.000000Z\",\"ttl_s\":3}",
      "{\"event\":\"broken\", no json here",
      "Exception in thread \"main\" java.lang.IllegalStateException: ünïcode",
      "{\"event\":\"seen\",\"id\":\"p-\uD83D\uDE00\",\"last_us\":1}",
      "{\"event\":\"stats\",\"stale\":0}") + "\n" + "{\"event\":\"exited\"}"; // the last line has no newline

  @Test
  void readsWhatTheWholeFileSaysAfterEveryWriteWhereverTheWritesSplitTheBytes(@TempDir Path dir) throws IOException {
    byte[] all = TEXT.getBytes(StandardCharsets.UTF_8);
    for (int seed = 0; seed < 200; seed++) {
      Random random = new Random(seed);
      Path file = dir.resolve("log-" + seed);
      JsonLogFollower follower = new JsonLogFollower(file);
      assertSame(follower.read(), wholeFile(file), seed, 0);
      try (OutputStream out = Files.newOutputStream(file)) {
        for (int at = 0; at < all.length; ) {
          int n = Math.min(all.length - at, 1 + random.nextInt(random.nextBoolean() ? 4 : 90));
          out.write(all, at, n);
          out.flush();
          at += n;
          assertSame(follower.read(), wholeFile(file), seed, at);
        }
      }
      assertThat(follower.read().eventNames()).containsExactly("registered", "keepalive", "seen", "stats", "exited");
      assertThat(follower.read().otherLines()).hasSize(2);
    }
  }

  @Test
  void startsAgainFromTheTopWhenTheFileWasRewrittenShorter(@TempDir Path dir) throws IOException {
    Path file = dir.resolve("log");
    Files.writeString(file, "{\"event\":\"a\"}\n{\"event\":\"b\"}\n{\"event\":\"c\"}\n");
    JsonLogFollower follower = new JsonLogFollower(file);
    assertThat(follower.read().eventNames()).containsExactly("a", "b", "c");

    Files.writeString(file, "{\"event\":\"d\"}\n", StandardOpenOption.TRUNCATE_EXISTING);
    assertThat(follower.read().eventNames()).containsExactly("d");
  }

  @Test
  void aLineStillBeingWrittenCountsOnceItIsWholeAndIsNeverCountedTwice(@TempDir Path dir) throws IOException {
    Path file = dir.resolve("log");
    JsonLogFollower follower = new JsonLogFollower(file);
    Files.writeString(file, "{\"event\":\"a\"}\n{\"event\":");
    assertThat(follower.read().eventNames()).containsExactly("a");
    Files.writeString(file, "\"b\"}", StandardOpenOption.APPEND);
    assertThat(follower.read().eventNames()).containsExactly("a", "b"); // whole JSON, no newline yet
    Files.writeString(file, "\n{\"event\":\"c\"}\n", StandardOpenOption.APPEND);
    assertThat(follower.read().eventNames()).containsExactly("a", "b", "c");
    assertThat(follower.read().eventNames()).containsExactly("a", "b", "c");
  }

  /** The whole file decoded at once (half a character at the end as U+FFFD) and split into lines. */
  private static JsonLog wholeFile(Path file) throws IOException {
    if (!Files.exists(file)) {
      return JsonLog.parse(List.of());
    }
    return JsonLog.parse(List.of(new String(Files.readAllBytes(file), StandardCharsets.UTF_8).split("\r?\n")));
  }

  private static void assertSame(JsonLog followed, JsonLog whole, int seed, int bytes) {
    List<JsonNode> expected = whole.lines();
    assertThat(followed.lines()).as("seed %d, after %d bytes", seed, bytes).isEqualTo(expected);
    assertThat(followed.otherLines()).as("seed %d, after %d bytes", seed, bytes).isEqualTo(whole.otherLines());
  }
}
