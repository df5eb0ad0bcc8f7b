package dev.muster.cache.internal;

import static dev.muster.cache.Endpoints.LAYOUT;
import static dev.muster.cache.Endpoints.PREFIX;
import static dev.muster.cache.Endpoints.SERVICE;
import static dev.muster.cache.Endpoints.delete;
import static dev.muster.cache.Endpoints.ids;
import static dev.muster.cache.Endpoints.instance;
import static dev.muster.cache.Endpoints.key;
import static dev.muster.cache.Endpoints.put;
import static java.nio.charset.StandardCharsets.UTF_8;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.muster.cache.EndpointDelta;
import dev.muster.cache.EndpointSet;
import dev.muster.cache.internal.RevisionApplier.Publication;
import dev.muster.registry.Instance;
import dev.muster.registry.InstanceCodec;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import org.junit.jupiter.api.Nested;
import org.junit.jupiter.api.Test;

class RevisionApplierTest {
  private final RevisionApplier view = new RevisionApplier(LAYOUT, PREFIX);

  /** Seed 002's snapshot: revision 20 holds {A, B}. */
  private void snapshotAt20WithAAndB() {
    view.replace(20, List.of(put("a", 5), put("b", 7)), EndpointDelta.Kind.SNAPSHOT);
  }

  /** Seed 002's history up to revision 24: {C, D} at 24. */
  private void seedHistoryUpTo24() {
    snapshotAt20WithAAndB();
    view.apply(21, List.of(delete("a", 21)));
    view.apply(22, List.of(put("c", 22)));
    view.apply(24, List.of(delete("b", 24), put("d", 24)));
  }

  /** A snapshot read page by page (a paged range, each page decoded while the next is fetched). */
  @Nested
  class SnapshotInPages {
    @Test
    void pagesInstalledTogetherGiveTheSameSetAsOneReplace() {
      RevisionApplier whole = new RevisionApplier(LAYOUT, PREFIX);
      whole.replace(20, List.of(put("a", 5), put("b", 7), put("c", 9)), EndpointDelta.Kind.SNAPSHOT);

      RevisionApplier.Snapshot next = view.snapshot();
      next.add(20, List.of(put("a", 5), put("b", 7)));
      next.add(20, List.of(put("c", 9)));
      RevisionApplier.Publication p = next.install(20, EndpointDelta.Kind.SNAPSHOT);

      assertThat(p.set().asMap()).isEqualTo(whole.current().asMap());
      assertThat(p.delta().added()).hasSize(3);
      assertThat(next.records()).isEqualTo(3);
      assertThat(view.revision()).isEqualTo(20);
    }

    @Test
    void nothingChangesUntilTheSnapshotIsInstalled() {
      seedHistoryUpTo24();
      EndpointSet before = view.current();

      RevisionApplier.Snapshot next = view.snapshot();
      next.add(30, List.of(put("x", 29)));

      assertThat(view.current()).isSameAs(before);
      next.install(30, EndpointDelta.Kind.RESYNC);
      assertThat(ids(view.current())).containsExactly("x");
    }

    @Test
    void aPageWithAKeyOutsideThePrefixAbandonsTheSnapshotAndLeavesTheSetUntouched() {
      seedHistoryUpTo24();
      EndpointSet before = view.current();
      RevisionApplier.Snapshot next = view.snapshot();
      next.add(30, List.of(put("x", 29)));

      assertThatThrownBy(() -> next.add(30, List.of(put(Instance.of("billing", "10.0.0.9", 9000).id("e"), 29))))
          .isInstanceOf(InvalidEventException.class);
      assertThat(view.current()).isSameAs(before);
    }

    @Test
    void pagesOfDifferentRevisionsOrASecondInstallAreRefused() {
      RevisionApplier.Snapshot next = view.snapshot();
      next.add(30, List.of(put("x", 29)));

      assertThatThrownBy(() -> next.add(31, List.of(put("y", 31)))).isInstanceOf(IllegalStateException.class)
          .hasMessageContaining("31");
      assertThatThrownBy(() -> next.install(31, EndpointDelta.Kind.SNAPSHOT))
          .isInstanceOf(IllegalStateException.class);
      next.install(30, EndpointDelta.Kind.SNAPSHOT);
      assertThatThrownBy(() -> next.install(30, EndpointDelta.Kind.SNAPSHOT))
          .isInstanceOf(IllegalStateException.class).hasMessageContaining("installed already");
    }
  }

  @Nested
  class TheSeedExample {
    @Test
    void revisionsAfterTheSnapshotApplyInOrderAndAGapIsLegal() {
      snapshotAt20WithAAndB();
      assertThat(ids(view.current())).containsExactly("a", "b");
      assertThat(view.revision()).isEqualTo(20);

      assertThat(view.apply(21, List.of(delete("a", 21)))).isPresent();
      assertThat(view.apply(22, List.of(put("c", 22)))).isPresent();
      assertThat(ids(view.current())).containsExactly("b", "c");

      // Revision 23 changed another prefix: this watch sees nothing of it, and that is not a missed event.
      assertThat(view.apply(24, List.of(delete("b", 24), put("d", 24)))).isPresent();
      assertThat(ids(view.current())).containsExactly("c", "d");
      assertThat(view.revision()).isEqualTo(24);
    }

    @Test
    void replayingAnAppliedRevisionIsANoOp() {
      seedHistoryUpTo24();
      EndpointSet before = view.current();

      assertThat(view.apply(24, List.of(delete("b", 24), put("d", 24)))).isEmpty();
      assertThat(view.apply(22, List.of(delete("c", 22)))).isEmpty();

      assertThat(view.current()).isSameAs(before);
      assertThat(ids(view.current())).containsExactly("c", "d");
      assertThat(view.revision()).isEqualTo(24);
    }

    @Test
    void aRevisionWithAKeyOutsideThePrefixIsRejectedWholeAndLeavesSetAndRevisionUntouched() {
      seedHistoryUpTo24();
      EndpointSet before = view.current();
      Instance billing = Instance.of("billing", "10.0.0.9", 9000).id("e");

      assertThatThrownBy(() -> view.apply(25, List.of(delete("c", 25), put(billing, 25))))
          .isInstanceOf(InvalidEventException.class)
          .hasMessageContaining(LAYOUT.instanceKey(billing));

      assertThat(view.current()).isSameAs(before);
      assertThat(ids(view.current())).containsExactly("c", "d");
      assertThat(view.revision()).isEqualTo(24);
    }

    @Test
    void aServiceWhoseNameStartsWithTheWatchedOneIsOutsideThePrefix() {
      seedHistoryUpTo24();
      Instance lookalike = Instance.of(SERVICE + "-gw", "10.0.0.9", 9000).id("e");

      assertThatThrownBy(() -> view.apply(25, List.of(put(lookalike, 25))))
          .isInstanceOf(InvalidEventException.class);
      assertThat(view.revision()).isEqualTo(24);
    }

    @Test
    void aRecordWhoseRevisionIsNotTheBatchRevisionIsRejectedWholeAndLeavesSetAndRevisionUntouched() {
      seedHistoryUpTo24();
      EndpointSet before = view.current();

      assertThatThrownBy(() -> view.apply(25, List.of(delete("c", 25), put("e", 26))))
          .isInstanceOf(InvalidEventException.class)
          .hasMessageContaining("26");

      assertThat(view.current()).isSameAs(before);
      assertThat(view.revision()).isEqualTo(24);
    }

    @Test
    void aRejectedRevisionIsNotCountedAsAppliedSoItsCorrectedBatchStillApplies() {
      seedHistoryUpTo24();
      assertThatThrownBy(() -> view.apply(25, List.of(delete("c", 25), put("e", 26))))
          .isInstanceOf(InvalidEventException.class);

      assertThat(view.apply(25, List.of(delete("c", 25), put("e", 25)))).isPresent();
      assertThat(ids(view.current())).containsExactly("d", "e");
    }

    @Test
    void applyingAWholeRevisionAsOneBatchKeepsEveryEventOfIt() {
      view.replace(22, List.of(put("b", 10), put("c", 22)), EndpointDelta.Kind.SNAPSHOT);

      view.apply(24, List.of(delete("b", 24), put("d", 24)));

      assertThat(ids(view.current())).containsExactly("c", "d");
    }

    /**
     * The seed's "bad per-row checkpoint": advancing the checkpoint after the first row of revision 24 makes the
     * second row look like a replay, so D is lost. This is why the adapter must hand the view whole revisions.
     */
    @Test
    void applyingARevisionRowByRowLosesTheSecondRowAsAReplay() {
      view.replace(22, List.of(put("b", 10), put("c", 22)), EndpointDelta.Kind.SNAPSHOT);

      assertThat(view.apply(24, List.of(delete("b", 24)))).isPresent();
      assertThat(view.apply(24, List.of(put("d", 24)))).isEmpty();

      assertThat(ids(view.current())).containsExactly("c").doesNotContain("d");
    }
  }

  @Test
  void decodedInstancesShareOneNamespaceServiceAndVersionStringEach() {
    view.replace(20, List.of(put("a", 20), put(instance("b").version("v2"), 20), put("c", 20)),
        EndpointDelta.Kind.SNAPSHOT);
    view.apply(21, List.of(put(instance("d").version("v2"), 21), put("e", 21)));

    Map<String, Instance> byId = new HashMap<>();
    view.current().instances().forEach(i -> byId.put(i.id(), i));
    assertThat(byId).containsOnlyKeys("a", "b", "c", "d", "e");
    Instance a = byId.get("a");
    for (Instance i : byId.values()) {
      assertThat(i.namespace()).as(i.id()).isSameAs(a.namespace());
      assertThat(i.service()).as(i.id()).isSameAs(a.service());
    }
    assertThat(byId.get("c").version()).isSameAs(a.version());
    assertThat(byId.get("e").version()).isSameAs(a.version());
    assertThat(byId.get("d").version()).isEqualTo("v2").isSameAs(byId.get("b").version());
  }

  @Nested
  class MalformedValues {
    private final CacheRecord notJson = CacheRecord.put(key("m1"), "not json".getBytes(UTF_8), 21);
    private final CacheRecord oversized = CacheRecord.put(key("m2"), oversizedButValidJson(), 21);
    private final CacheRecord wrongTypes =
        CacheRecord.put(key("m3"), "{\"address\":\"10.0.0.7\",\"port\":\"80\"}".getBytes(UTF_8), 21);
    private final CacheRecord keyNotInTheLayout =
        CacheRecord.put(PREFIX + "v1/m4/extra", InstanceCodec.encode(instance("m4")), 21);
    private final CacheRecord badName =
        CacheRecord.put(PREFIX + "V1/m5", InstanceCodec.encode(instance("m5")), 21);

    private static byte[] oversizedButValidJson() {
      String padding = "x".repeat(InstanceCodec.MAX_VALUE_BYTES);
      return ("{\"address\":\"10.0.0.7\",\"port\":8080,\"metadata\":{\"pad\":\"" + padding + "\"}}").getBytes(UTF_8);
    }

    @Test
    void areExcludedAndCountedWhileTheRestOfTheRevisionAppliesAndTheRevisionAdvances() {
      view.replace(20, List.of(put("a", 5)), EndpointDelta.Kind.SNAPSHOT);

      Optional<Publication> applied = view.apply(21,
          List.of(notJson, oversized, wrongTypes, keyNotInTheLayout, badName, put("b", 21), delete("a", 21)));

      assertThat(applied).isPresent();
      assertThat(ids(view.current())).containsExactly("b");
      assertThat(view.revision()).isEqualTo(21);
      assertThat(view.malformedCount()).isEqualTo(5);
      assertThat(applied.get().delta().added()).containsExactly(instance("b"));
      assertThat(applied.get().delta().removed()).containsExactly(instance("a"));
    }

    @Test
    void inASnapshotAreExcludedAndCounted() {
      view.replace(20, List.of(put("a", 5), notJson, wrongTypes, keyNotInTheLayout), EndpointDelta.Kind.SNAPSHOT);

      assertThat(ids(view.current())).containsExactly("a");
      assertThat(view.malformedCount()).isEqualTo(3);
    }

    @Test
    void aValidInstanceWhoseValueBecomesMalformedIsRemovedAndReportedAsRemoved() {
      view.replace(20, List.of(put("a", 5), put("b", 7)), EndpointDelta.Kind.SNAPSHOT);

      Optional<Publication> applied =
          view.apply(21, List.of(CacheRecord.put(key("a"), "{\"port\":8080}".getBytes(UTF_8), 21)));

      assertThat(ids(view.current())).containsExactly("b");
      assertThat(applied.orElseThrow().delta().removed()).containsExactly(instance("a"));
      assertThat(applied.get().delta().added()).isEmpty();
      assertThat(applied.get().delta().changed()).isEmpty();
      assertThat(view.malformedCount()).isEqualTo(1);
    }

    @Test
    void aDeleteOfAKeyThatDoesNotParseIsIgnoredWithoutCounting() {
      view.replace(20, List.of(put("a", 5)), EndpointDelta.Kind.SNAPSHOT);

      Optional<Publication> applied = view.apply(21, List.of(CacheRecord.delete(PREFIX + "v1/a/extra", 21)));

      assertThat(applied.orElseThrow().delta().isEmpty()).isTrue();
      assertThat(view.revision()).isEqualTo(21);
      assertThat(view.malformedCount()).isZero();
    }
  }

  @Nested
  class Deltas {
    @Test
    void aPutOfANewKeyIsAnAddition() {
      view.replace(20, List.of(put("a", 5)), EndpointDelta.Kind.SNAPSHOT);

      EndpointDelta delta = view.apply(21, List.of(put("b", 21))).orElseThrow().delta();

      assertThat(delta.kind()).isEqualTo(EndpointDelta.Kind.UPDATE);
      assertThat(delta.added()).containsExactly(instance("b"));
      assertThat(delta.removed()).isEmpty();
      assertThat(delta.changed()).isEmpty();
    }

    @Test
    void aPutOfAnExistingKeyWithANewValueIsAChange() {
      view.replace(20, List.of(put("a", 5)), EndpointDelta.Kind.SNAPSHOT);
      Instance heavier = instance("a").weight(500);

      EndpointDelta delta = view.apply(21, List.of(put(heavier, 21))).orElseThrow().delta();

      assertThat(delta.changed()).containsExactly(heavier);
      assertThat(delta.added()).isEmpty();
      assertThat(delta.removed()).isEmpty();
      assertThat(view.current().get(heavier.key())).contains(heavier);
    }

    @Test
    void aPutWithAnIdenticalValueChangesNothing() {
      view.replace(20, List.of(put("a", 5)), EndpointDelta.Kind.SNAPSHOT);

      Publication p = view.apply(21, List.of(put("a", 21))).orElseThrow();

      assertThat(p.delta().isEmpty()).isTrue();
      assertThat(p.set().revision()).isEqualTo(21);
    }

    @Test
    void aDeleteOfAnUnknownKeyChangesNothing() {
      view.replace(20, List.of(put("a", 5)), EndpointDelta.Kind.SNAPSHOT);

      Publication p = view.apply(21, List.of(delete("z", 21))).orElseThrow();

      assertThat(p.delta().isEmpty()).isTrue();
      assertThat(ids(p.set())).containsExactly("a");
    }

    @Test
    void aDeleteOfAKnownKeyIsARemoval() {
      view.replace(20, List.of(put("a", 5), put("b", 6)), EndpointDelta.Kind.SNAPSHOT);

      EndpointDelta delta = view.apply(21, List.of(delete("a", 21))).orElseThrow().delta();

      assertThat(delta.removed()).containsExactly(instance("a"));
      assertThat(delta.added()).isEmpty();
      assertThat(delta.changed()).isEmpty();
    }
  }

  @Nested
  class Replace {
    @Test
    void neverMergesSoAKeyAbsentFromTheSnapshotDisappears() {
      seedHistoryUpTo24();

      Publication p = view.replace(30, List.of(put("d", 24), put("e", 28)), EndpointDelta.Kind.RESYNC);

      assertThat(ids(view.current())).containsExactly("d", "e");
      assertThat(view.revision()).isEqualTo(30);
      assertThat(p.set()).isSameAs(view.current());
    }

    @Test
    void reportsTheDeltaBetweenTheOldSetAndTheNewOne() {
      seedHistoryUpTo24();
      Instance movedD = instance("d").port(9090);

      EndpointDelta delta =
          view.replace(30, List.of(put(movedD, 27), put("e", 28)), EndpointDelta.Kind.RESYNC).delta();

      assertThat(delta.kind()).isEqualTo(EndpointDelta.Kind.RESYNC);
      assertThat(delta.added()).containsExactly(instance("e"));
      assertThat(delta.removed()).containsExactly(instance("c"));
      assertThat(delta.changed()).containsExactly(movedD);
    }

    @Test
    void mayGoBackToAnEarlierRevisionWhenTheStoreItselfWentBack() {
      seedHistoryUpTo24();

      view.replace(12, List.of(put("a", 5)), EndpointDelta.Kind.RESYNC);

      assertThat(view.revision()).isEqualTo(12);
      assertThat(ids(view.current())).containsExactly("a");
    }

    @Test
    void aSnapshotWithAKeyOutsideThePrefixIsRejectedAndTheOldSetKept() {
      seedHistoryUpTo24();
      EndpointSet before = view.current();
      Instance billing = Instance.of("billing", "10.0.0.9", 9000).id("e");

      assertThatThrownBy(() -> view.replace(30, List.of(put("e", 28), put(billing, 29)), EndpointDelta.Kind.RESYNC))
          .isInstanceOf(InvalidEventException.class);

      assertThat(view.current()).isSameAs(before);
    }
  }
}
