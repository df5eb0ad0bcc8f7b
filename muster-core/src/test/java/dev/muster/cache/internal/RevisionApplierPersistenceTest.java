package dev.muster.cache.internal;

import static dev.muster.cache.Endpoints.LAYOUT;
import static dev.muster.cache.Endpoints.PREFIX;
import static dev.muster.cache.Endpoints.REGISTERED;
import static dev.muster.cache.Endpoints.SERVICE;
import static dev.muster.cache.Endpoints.put;
import static java.nio.charset.StandardCharsets.UTF_8;
import static org.assertj.core.api.Assertions.assertThat;

import dev.muster.cache.EndpointDelta;
import dev.muster.cache.EndpointSet;
import dev.muster.cache.internal.RevisionApplier.Publication;
import dev.muster.registry.Instance;
import dev.muster.registry.InstanceCodec;
import dev.muster.registry.InstanceKey;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.Set;
import org.junit.jupiter.api.Test;

/**
 * The view over a persistent set: applying a revision shares structure with the set before it, so these tests
 * check that no published set ever changes afterwards, and that many random revisions leave exactly what a plain
 * {@link HashMap} replaying the same events would hold.
 */
class RevisionApplierPersistenceTest {
  private static final Comparator<Instance> BY_PATH = Comparator.comparing(i -> i.key().path());

  private final RevisionApplier view = new RevisionApplier(LAYOUT, PREFIX);

  private static Instance numbered(int n) {
    return Instance.of(SERVICE, "10.0.0.7", 8080).id("i" + n).registeredAt(REGISTERED);
  }

  @Test
  void applyingToALargeViewLeavesThePreviouslyPublishedSetUnchanged() {
    byte[] value = InstanceCodec.encode(numbered(0)); // identity is in the key, so one value serves every key
    List<CacheRecord> snapshot = new ArrayList<>();
    for (int n = 0; n < 10_000; n++) {
      snapshot.add(CacheRecord.put(LAYOUT.instanceKey(new InstanceKey("default", SERVICE, "v1", "i" + n)), value, 5));
    }
    view.replace(10, snapshot, EndpointDelta.Kind.SNAPSHOT);
    EndpointSet before = view.current();
    Map<InstanceKey, Instance> copyBefore = new HashMap<>(before.asMap());

    Publication p = view.apply(11, List.of(
        put(numbered(17).weight(3), 11),
        CacheRecord.delete(LAYOUT.instanceKey(numbered(4_242)), 11),
        put(numbered(10_000), 11),
        CacheRecord.put(LAYOUT.instanceKey(numbered(9_999)), "{}".getBytes(UTF_8), 11)))
        .orElseThrow();

    // The old set is asked for its list only now, after the apply: it must still be built from the old tree.
    assertThat(before.revision()).isEqualTo(10);
    assertThat(before.size()).isEqualTo(10_000);
    assertThat(before.asMap()).isEqualTo(copyBefore);
    assertThat(before.get(numbered(17).key())).contains(numbered(17));
    assertThat(before.contains(numbered(4_242).key())).isTrue();
    assertThat(before.contains(numbered(9_999).key())).isTrue();
    assertThat(before.contains(numbered(10_000).key())).isFalse();
    assertThat(before.instances()).hasSize(10_000).isSortedAccordingTo(BY_PATH);

    EndpointSet after = p.set();
    assertThat(after.size()).isEqualTo(9_999);
    assertThat(after.get(numbered(17).key())).contains(numbered(17).weight(3));
    assertThat(p.delta().added()).containsExactly(numbered(10_000));
    assertThat(p.delta().removed()).containsExactly(numbered(4_242), numbered(9_999));
    assertThat(p.delta().changed()).containsExactly(numbered(17).weight(3));
  }

  /**
   * The reference model: 2,000 seeded revisions of puts, deletes, values that stop decoding and keys outside the
   * layout, on up to 500 keys whose versions and ids contain '-' and prefixes of each other (so the path order is
   * not the field order). After every revision the set, its order and its delta must match the model; every
   * 100th set is kept and checked again at the end, when many later sets share its nodes.
   */
  @Test
  void manyRandomRevisionsLeaveWhatAPlainMapReplayingThemHoldsSortedByKeyPath() {
    Random random = new Random(20261129L);
    // 500 keys × 4 weights, built and encoded once: building an Instance validates every field and encoding is
    // JSON, which would otherwise be most of this test's time.
    List<String> versions = List.of("v1", "v1-rc", "v10", "v2");
    Instance[][] pool = new Instance[500][4];
    byte[][][] values = new byte[500][4][];
    InstanceKey[] keys = new InstanceKey[500];
    for (int slot = 0; slot < 500; slot++) {
      for (int weight = 0; weight < 4; weight++) {
        pool[slot][weight] = Instance.of(SERVICE, "10.0.0.7", 8080).version(versions.get(slot % 4))
            .id(("i" + slot / 4).replace("3", "-3")).registeredAt(REGISTERED).weight(weight);
        values[slot][weight] = InstanceCodec.encode(pool[slot][weight]);
      }
      keys[slot] = pool[slot][0].key();
    }
    Map<InstanceKey, Instance> model = new HashMap<>();
    List<EndpointSet> kept = new ArrayList<>();
    List<Map<InstanceKey, Instance>> keptModels = new ArrayList<>();
    view.replace(1, List.of(), EndpointDelta.Kind.SNAPSHOT);
    long revision = 1;

    for (int step = 0; step < 2_000; step++) {
      if (random.nextInt(20) == 0) { // a replay is ignored and changes nothing
        EndpointSet current = view.current();
        assertThat(view.apply(revision, List.of(CacheRecord.delete(PREFIX + "v1/i1", revision)))).isEmpty();
        assertThat(view.current()).isSameAs(current);
        continue;
      }
      revision += 1 + random.nextInt(3);
      Map<InstanceKey, Instance> modelBefore = new HashMap<>(model);
      EndpointSet setBefore = view.current();
      List<CacheRecord> events = new ArrayList<>();
      Set<InstanceKey> touched = new LinkedHashSet<>();
      int count = 1 + random.nextInt(random.nextInt(10) == 0 ? 40 : 4);
      for (int e = 0; e < count; e++) {
        int slot = random.nextInt(500);
        int weight = random.nextInt(4);
        Instance instance = pool[slot][weight];
        InstanceKey instanceKey = keys[slot];
        String key = LAYOUT.instanceKey(instanceKey);
        int what = random.nextInt(100);
        if (what < 55) {
          events.add(CacheRecord.put(key, values[slot][weight], revision));
          model.put(instanceKey, instance);
        } else if (what < 90) {
          events.add(CacheRecord.delete(key, revision));
          model.remove(instanceKey);
        } else if (what < 95) {
          events.add(CacheRecord.put(key, "not json".getBytes(UTF_8), revision));
          model.remove(instanceKey);
        } else {
          events.add(CacheRecord.put(key + "/extra", "{}".getBytes(UTF_8), revision));
          continue; // not an instance key: ignored
        }
        touched.add(instanceKey);
      }

      Publication p = view.apply(revision, events).orElseThrow();

      EndpointSet set = p.set();
      assertThat(set.revision()).isEqualTo(revision);
      assertThat(set.asMap()).as("revision %d", revision).isEqualTo(model);
      // Sorted by the keys the model holds: Instance.key() validates a new key on every call, too slow for
      // 2,000 sorts. isEqualTo, not containsExactly: List.equals is O(n), AssertJ's element search O(n^2).
      assertThat(set.instances()).isEqualTo(model.entrySet().stream()
          .sorted(Map.Entry.comparingByKey(Comparator.comparing(InstanceKey::path))).map(Map.Entry::getValue)
          .toList());
      assertThat(setBefore.asMap()).as("the set before revision %d", revision).isEqualTo(modelBefore);
      assertDeltaMatchesModel(p.delta(), touched, modelBefore, model);
      EndpointDelta diffed = EndpointDelta.between(EndpointDelta.Kind.UPDATE, setBefore, set);
      assertThat(diffed.added()).containsExactlyInAnyOrderElementsOf(p.delta().added());
      assertThat(diffed.removed()).containsExactlyInAnyOrderElementsOf(p.delta().removed());
      assertThat(diffed.changed()).containsExactlyInAnyOrderElementsOf(p.delta().changed());
      if (step % 100 == 0) {
        kept.add(set);
        keptModels.add(new HashMap<>(model));
      }
    }

    assertThat(view.current().size()).isBetween(1, 500);
    for (int i = 0; i < kept.size(); i++) {
      assertThat(kept.get(i).asMap()).as("kept set %d", i).isEqualTo(keptModels.get(i));
      assertThat(kept.get(i).instances()).isSortedAccordingTo(BY_PATH);
    }
  }

  private static void assertDeltaMatchesModel(EndpointDelta delta, Set<InstanceKey> touched,
      Map<InstanceKey, Instance> before, Map<InstanceKey, Instance> after) {
    List<Instance> added = new ArrayList<>();
    List<Instance> removed = new ArrayList<>();
    List<Instance> changed = new ArrayList<>();
    for (InstanceKey k : touched) {
      Instance old = before.get(k);
      Instance now = after.get(k);
      if (old == null && now != null) {
        added.add(now);
      } else if (old != null && now == null) {
        removed.add(old);
      } else if (old != null && !old.equals(now)) {
        changed.add(now);
      }
    }
    assertThat(delta.kind()).isEqualTo(EndpointDelta.Kind.UPDATE);
    assertThat(delta.added()).containsExactlyElementsOf(added);
    assertThat(delta.removed()).containsExactlyElementsOf(removed);
    assertThat(delta.changed()).containsExactlyElementsOf(changed);
  }
}
