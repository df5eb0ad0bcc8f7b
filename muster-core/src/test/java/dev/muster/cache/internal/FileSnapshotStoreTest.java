package dev.muster.cache.internal;

import static dev.muster.cache.Endpoints.instance;
import static java.nio.charset.StandardCharsets.UTF_8;
import static org.assertj.core.api.Assertions.assertThat;

import dev.muster.cache.EndpointSet;
import dev.muster.cache.Endpoints;
import dev.muster.registry.Instance;
import dev.muster.registry.InstanceState;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

class FileSnapshotStoreTest {
  @TempDir
  Path dir;

  private Path file() {
    return dir.resolve("orders.snapshot.json");
  }

  private static Instance detailed() {
    return instance("b").state(InstanceState.DRAINING).weight(7).zone("a").region("r1")
        .tags(List.of("canary", "blue")).metadata(Map.of("k", "v", "build", "42"))
        .registeredAt(Instant.parse("2026-11-29T10:00:00.123Z"));
  }

  @Test
  void aSavedSetLoadsBackWithItsInstancesAndRevision() {
    FileSnapshotStore store = new FileSnapshotStore(file());
    EndpointSet set = EndpointSet.of(42, List.of(instance("a"), detailed(), instance("c").version("v2")));

    store.save(set);
    EndpointSet loaded = new FileSnapshotStore(file()).load().orElseThrow();

    assertThat(loaded.revision()).isEqualTo(42);
    assertThat(loaded.sameInstances(set)).isTrue();
    assertThat(loaded.instances()).containsExactlyElementsOf(set.instances());
  }

  @Test
  void anEmptySetRoundTripsToo() {
    FileSnapshotStore store = new FileSnapshotStore(file());

    store.save(EndpointSet.of(7, List.of()));

    assertThat(store.load()).hasValueSatisfying(s -> {
      assertThat(s.revision()).isEqualTo(7);
      assertThat(s.isEmpty()).isTrue();
    });
  }

  @Test
  void aMissingFileLoadsAsEmpty() {
    assertThat(new FileSnapshotStore(file()).load()).isEmpty();
  }

  @ParameterizedTest
  @ValueSource(strings = {
      "not json at all",
      "{\"format\":1,\"revision\":42,\"instances\":[{\"key\":{\"namespace\":\"default\"", // cut short
      "{\"format\":1,\"revision\":42,\"instances\":[{\"key\":{\"namespace\":\"default\",\"service\":\"orders\","
          + "\"version\":\"v1\",\"id\":\"Not A Name\"},\"value\":{\"address\":\"10.0.0.7\",\"port\":8080}}]}",
      "{\"format\":1,\"revision\":42,\"instances\":[{\"key\":{\"namespace\":\"default\",\"service\":\"orders\","
          + "\"version\":\"v1\",\"id\":\"a\"},\"value\":{\"address\":\"10.0.0.7\",\"port\":\"80\"}}]}",
      "",
      "{}",
      "[]",
      "null",
      "42",
      "{\"format\":1,\"instances\":[]}",
      "{\"format\":1,\"revision\":\"soon\",\"instances\":[]}",
      "{\"format\":1,\"revision\":42}",
      "{\"format\":1,\"revision\":42,\"instances\":{}}",
      "{\"format\":99,\"revision\":42,\"instances\":[]}",
  })
  void aCorruptFileLoadsAsEmptyWithoutThrowing(String content) throws IOException {
    Files.writeString(file(), content, UTF_8);

    assertThat(new FileSnapshotStore(file()).load()).isEmpty();
  }

  @Test
  void aSaveReplacesTheOldFileAndLeavesNoTemporaryFileBehind() throws IOException {
    FileSnapshotStore store = new FileSnapshotStore(file());
    store.save(EndpointSet.of(1, List.of(instance("a"))));

    store.save(EndpointSet.of(2, List.of(instance("b"))));

    assertThat(store.load()).hasValueSatisfying(s -> {
      assertThat(s.revision()).isEqualTo(2);
      assertThat(Endpoints.ids(s)).containsExactly("b");
    });
    try (Stream<Path> files = Files.list(dir)) {
      assertThat(files).containsExactly(file());
    }
  }

  @Test
  void aSaveReplacesACorruptFile() throws IOException {
    Files.writeString(file(), "garbage", UTF_8);
    FileSnapshotStore store = new FileSnapshotStore(file());

    store.save(EndpointSet.of(3, List.of(instance("a"))));

    assertThat(store.load()).hasValueSatisfying(s -> assertThat(s.revision()).isEqualTo(3));
  }

  @Test
  void aSaveCreatesMissingDirectories() {
    Path nested = dir.resolve("a/b/snapshot.json");

    new FileSnapshotStore(nested).save(EndpointSet.of(5, List.of(instance("a"))));

    assertThat(new FileSnapshotStore(nested).load()).isPresent();
  }

  @Test
  void aSaveThatCannotWriteIsLoggedNotThrown() throws IOException {
    Path blocker = dir.resolve("not-a-dir");
    Files.writeString(blocker, "x", UTF_8);
    FileSnapshotStore store = new FileSnapshotStore(blocker.resolve("snapshot.json"));

    store.save(EndpointSet.of(5, List.of(instance("a"))));

    assertThat(store.load()).isEmpty();
  }
}
