package dev.muster.cache.internal;

import static dev.muster.cache.Endpoints.LAYOUT;
import static dev.muster.cache.Endpoints.PREFIX;
import static dev.muster.cache.Endpoints.SERVICE;
import static dev.muster.cache.Endpoints.instance;
import static java.nio.charset.StandardCharsets.UTF_8;
import static org.assertj.core.api.Assertions.assertThat;

import dev.muster.cache.EndpointDelta;
import dev.muster.cache.EndpointSet;
import dev.muster.cache.Endpoints;
import dev.muster.cache.internal.SnapshotStore.Stored;
import dev.muster.registry.Instance;
import dev.muster.registry.InstanceCodec;
import dev.muster.registry.InstanceState;
import dev.muster.sign.SigningKey;
import dev.muster.sign.TrustedKeys;
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
  private static final SigningKey PROVIDER = SigningKey.generate();
  private static final long LEASE = 0x7777;

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

  private static CacheRecord unsigned(Instance i, long revision) {
    return CacheRecord.put(LAYOUT.instanceKey(i), InstanceCodec.encode(i), revision, 0);
  }

  private static CacheRecord signed(Instance i, SigningKey by, long revision) {
    String key = LAYOUT.instanceKey(i);
    return CacheRecord.put(key, InstanceCodec.encodeSigned(i, key, LEASE, revision, Instant.now().plusSeconds(600),
        by, false), revision, LEASE);
  }

  private static Stored stored(long revision, CacheRecord... records) {
    return new Stored(revision, List.of(records));
  }

  @Test
  void savedRecordsLoadBackByteForByte() {
    FileSnapshotStore store = new FileSnapshotStore(file());
    Stored set = stored(42, unsigned(instance("a"), 5), signed(detailed(), PROVIDER, 7),
        unsigned(instance("c").version("v2"), 9));

    store.save(set);
    Stored loaded = new FileSnapshotStore(file()).load().orElseThrow();

    assertThat(loaded.revision()).isEqualTo(42);
    assertThat(loaded.records()).hasSize(3);
    for (int i = 0; i < 3; i++) {
      CacheRecord a = set.records().get(i);
      CacheRecord b = loaded.records().get(i);
      assertThat(b.key()).isEqualTo(a.key());
      assertThat(b.lease()).isEqualTo(a.lease());
      assertThat(b.modRevision()).isEqualTo(a.modRevision());
      assertThat(b.value()).isEqualTo(a.value());
    }
  }

  @Test
  void anEmptySetRoundTripsToo() {
    FileSnapshotStore store = new FileSnapshotStore(file());

    store.save(stored(7));

    assertThat(store.load()).hasValueSatisfying(s -> {
      assertThat(s.revision()).isEqualTo(7);
      assertThat(s.records()).isEmpty();
    });
  }

  @Test
  void aMissingFileLoadsAsEmpty() {
    assertThat(new FileSnapshotStore(file()).load()).isEmpty();
  }

  @ParameterizedTest
  @ValueSource(strings = {
      "not json at all",
      "{\"format\":2,\"revision\":42,\"records\":[{\"key\":\"/muster/default", // cut short
      "{\"format\":2,\"revision\":42,\"records\":[{\"key\":7,\"lease\":0,\"modRevision\":5,\"value\":\"e30=\"}]}",
      "{\"format\":2,\"revision\":42,\"records\":[{\"key\":\"k\",\"lease\":0,\"modRevision\":5,\"value\":\"!!\"}]}",
      "{\"format\":2,\"revision\":42,\"records\":[{\"key\":\"k\",\"modRevision\":5,\"value\":\"e30=\"}]}",
      "",
      "{}",
      "[]",
      "null",
      "42",
      "{\"format\":2,\"records\":[]}",
      "{\"format\":2,\"revision\":\"soon\",\"records\":[]}",
      "{\"format\":2,\"revision\":42}",
      "{\"format\":2,\"revision\":42,\"records\":{}}",
      "{\"format\":99,\"revision\":42,\"records\":[]}",
      // Muster 0.1's format: decoded instances, nothing to check again
      "{\"format\":1,\"revision\":42,\"instances\":[{\"key\":{\"namespace\":\"default\",\"service\":\"orders\","
          + "\"version\":\"v1\",\"id\":\"a\"},\"value\":{\"address\":\"10.0.0.7\",\"port\":8080}}]}",
  })
  void aCorruptOrOldFileLoadsAsEmptyWithoutThrowing(String content) throws IOException {
    Files.writeString(file(), content, UTF_8);

    assertThat(new FileSnapshotStore(file()).load()).isEmpty();
  }

  @Test
  void aSaveReplacesTheOldFileLeavesNoTemporaryFileBehindAndIsTheOwnersAlone() throws IOException {
    FileSnapshotStore store = new FileSnapshotStore(file());
    store.save(stored(1, unsigned(instance("a"), 1)));

    store.save(stored(2, unsigned(instance("b"), 2)));

    assertThat(store.load()).hasValueSatisfying(s -> {
      assertThat(s.revision()).isEqualTo(2);
      assertThat(s.records()).extracting(CacheRecord::key).containsExactly(Endpoints.key("b"));
    });
    try (Stream<Path> files = Files.list(dir)) {
      assertThat(files).containsExactly(file());
    }
    assertThat(java.nio.file.attribute.PosixFilePermissions.toString(Files.getPosixFilePermissions(file())))
        .isEqualTo("rw-------");
  }

  @Test
  void aSaveReplacesACorruptFile() throws IOException {
    Files.writeString(file(), "garbage", UTF_8);
    FileSnapshotStore store = new FileSnapshotStore(file());

    store.save(stored(3, unsigned(instance("a"), 3)));

    assertThat(store.load()).hasValueSatisfying(s -> assertThat(s.revision()).isEqualTo(3));
  }

  @Test
  void aSaveCreatesMissingDirectories() {
    Path nested = dir.resolve("a/b/snapshot.json");

    new FileSnapshotStore(nested).save(stored(5, unsigned(instance("a"), 5)));

    assertThat(new FileSnapshotStore(nested).load()).isPresent();
  }

  @Test
  void aSaveThatCannotWriteIsLoggedNotThrown() throws IOException {
    Path blocker = dir.resolve("not-a-dir");
    Files.writeString(blocker, "x", UTF_8);
    FileSnapshotStore store = new FileSnapshotStore(blocker.resolve("snapshot.json"));

    store.save(stored(5, unsigned(instance("a"), 5)));

    assertThat(store.load()).isEmpty();
  }

  /**
   * Issue 35: a loaded record is judged as etcd's would be. Today's code loaded the file's instances as they were:
   * another service's entry, and (with trusted keys) an unsigned or forged one, were served.
   */
  @Test
  void aLoadedSetKeepsOnlyThisCachesRecordsThatDecodeAndVerify() {
    RevisionApplier trusting = new RevisionApplier(LAYOUT, PREFIX,
        TrustedKeys.builder().service("default", SERVICE, PROVIDER.trustedKey()).build());
    Instance billing = Instance.of("billing", "10.0.0.9", 9090).id("x");
    Stored file = stored(42, signed(instance("a"), PROVIDER, 5), signed(instance("f"), SigningKey.generate(), 6),
        unsigned(instance("u"), 7), signed(billing, PROVIDER, 8),
        CacheRecord.put(Endpoints.key("m"), "{\"port\":1}".getBytes(UTF_8), 9, 0),
        signed(instance("late"), PROVIDER, 43)); // written after the set's revision: not from this set

    EndpointSet set = SavedSets.check(trusting, file);

    assertThat(Endpoints.ids(set)).containsExactly("a");
    assertThat(set.revision()).isEqualTo(42);
    assertThat(trusting.current().revision()).as("the cache's own applier is untouched").isZero();

    RevisionApplier plain = new RevisionApplier(LAYOUT, PREFIX);
    assertThat(Endpoints.ids(SavedSets.check(plain, file))).containsExactly("a", "f", "u");
  }

  @Test
  void aPublishedSetIsSavedAsEtcdHeldItsSignedRecords() {
    RevisionApplier trusting = new RevisionApplier(LAYOUT, PREFIX,
        TrustedKeys.builder().service("default", SERVICE, PROVIDER.trustedKey()).build());
    CacheRecord a = signed(instance("a"), PROVIDER, 5);
    trusting.replace(10, List.of(a), EndpointDelta.Kind.SNAPSHOT);

    List<CacheRecord> saved = SavedSets.records(trusting, trusting.current());

    assertThat(saved).singleElement().satisfies(r -> {
      assertThat(r.value()).isEqualTo(a.value());
      assertThat(r.lease()).isEqualTo(LEASE);
    });
    assertThat(Endpoints.ids(SavedSets.check(trusting, new Stored(10, saved)))).containsExactly("a");
  }
}
