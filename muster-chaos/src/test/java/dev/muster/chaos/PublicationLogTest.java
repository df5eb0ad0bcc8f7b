package dev.muster.chaos;

import static org.assertj.core.api.Assertions.assertThat;

import dev.muster.cache.EndpointDelta;
import dev.muster.cache.EndpointSet;
import dev.muster.registry.Instance;
import java.util.List;
import org.junit.jupiter.api.Test;

/** The checks a cache's publications must pass before they are even compared with etcd. */
class PublicationLogTest {
  private final List<PublicationLog.Publication> handedOn = new java.util.ArrayList<>();
  private final PublicationLog log = new PublicationLog("svc", handedOn::add);

  private static Instance i(String id) {
    return Instance.of("svc", "10.0.0.1", 80).id(id);
  }

  private static EndpointSet set(long revision, Instance... instances) {
    return EndpointSet.of(revision, List.of(instances));
  }

  private void publish(EndpointDelta.Kind kind, EndpointSet before, EndpointSet after) {
    log.onChange(after, EndpointDelta.between(kind, before, after));
  }

  @Test
  void aSnapshotThenUpdatesAndAResyncThatRebuildEachSetPass() {
    EndpointSet a = set(5, i("a"));
    EndpointSet ab = set(6, i("a"), i("b"));
    EndpointSet b = set(9, i("b"));
    publish(EndpointDelta.Kind.SNAPSHOT, EndpointSet.EMPTY, a);
    publish(EndpointDelta.Kind.UPDATE, a, ab);
    publish(EndpointDelta.Kind.RESYNC, ab, b);

    assertThat(log.breaches()).isEmpty();
    assertThat(handedOn).extracting(PublicationLog.Publication::revision).containsExactly(5L, 6L, 9L);
    assertThat(log.lastRevision()).isEqualTo(9);
  }

  @Test
  void anUpdateFirstASecondSnapshotAndARevisionThatDoesNotIncreaseAreBreaches() {
    EndpointSet a = set(5, i("a"));
    publish(EndpointDelta.Kind.UPDATE, EndpointSet.EMPTY, a);
    publish(EndpointDelta.Kind.SNAPSHOT, EndpointSet.EMPTY, set(5, i("a")));

    assertThat(log.breaches()).hasSize(3).anySatisfy(b -> assertThat(b).contains("not SNAPSHOT"))
        .anySatisfy(b -> assertThat(b).contains("second SNAPSHOT"))
        .anySatisfy(b -> assertThat(b).contains("revision 5 after 5"));
  }

  @Test
  void aDeltaThatDoesNotRebuildThePublishedSetIsABreach() {
    EndpointSet a = set(5, i("a"));
    publish(EndpointDelta.Kind.SNAPSHOT, EndpointSet.EMPTY, a);
    log.onChange(set(6, i("a"), i("b")), new EndpointDelta(EndpointDelta.Kind.UPDATE, List.of(), List.of(),
        List.of()));

    assertThat(log.breaches()).singleElement().asString().contains("do not rebuild");
  }
}
