package dev.muster.cache;

import static dev.muster.cache.Endpoints.instance;
import static dev.muster.cache.Endpoints.instanceKey;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.muster.registry.Instance;
import dev.muster.registry.InstanceKey;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

class EndpointSetTest {
  private final EndpointSet abc = EndpointSet.of(7, List.of(instance("c"), instance("a"), instance("b")));

  @Test
  void instancesAreSortedByKeyPathWhateverOrderTheyCameIn() {
    assertThat(abc.instances()).containsExactly(instance("a"), instance("b"), instance("c"));
  }

  /** {@code '-'} sorts before {@code '/'}, so the path order is not the field-by-field order. */
  @Test
  void instancesFollowThePathStringEvenWhereAFieldByFieldOrderWouldDiffer() {
    Instance v1 = instance("a").version("v1");
    Instance v1rc = instance("a").version("v1-rc");
    Instance idA = instance("a").version("v2");
    Instance idAb = instance("a-b").version("v2");

    EndpointSet set = EndpointSet.of(1, List.of(v1, v1rc, idA, idAb));

    assertThat(v1rc.key().path()).isLessThan(v1.key().path());
    assertThat(set.instances()).containsExactly(v1rc, v1, idA, idAb);
  }

  @Test
  void ofKeepsTheLaterOfTwoInstancesWithTheSameKey() {
    Instance heavier = instance("a").weight(500);

    EndpointSet set = EndpointSet.of(1, List.of(instance("a"), heavier));

    assertThat(set.size()).isEqualTo(1);
    assertThat(set.get(instanceKey("a"))).contains(heavier);
  }

  @Test
  void getAndContainsAnswerForPresentAbsentAndNullKeys() {
    assertThat(abc.get(instanceKey("b"))).contains(instance("b"));
    assertThat(abc.get(instanceKey("z"))).isEmpty();
    assertThat(abc.get(null)).isEmpty();
    assertThat(abc.contains(instanceKey("a"))).isTrue();
    assertThat(abc.contains(instanceKey("z"))).isFalse();
    assertThat(abc.contains(null)).isFalse();
    assertThat(abc.asMap().get(instanceKey("c"))).isEqualTo(instance("c"));
    assertThat(abc.asMap().get("c")).isNull();
    assertThat(abc.asMap().containsKey(null)).isFalse();
    assertThat(abc.asMap().containsKey(instanceKey("z"))).isFalse();
  }

  @Test
  void asMapRejectsEveryMutationAndTheSetStaysAsItWas() {
    Map<InstanceKey, Instance> map = abc.asMap();
    InstanceKey a = instanceKey("a");
    Map.Entry<InstanceKey, Instance> first = map.entrySet().iterator().next();

    assertThatThrownBy(() -> map.put(instanceKey("d"), instance("d")))
        .isInstanceOf(UnsupportedOperationException.class);
    assertThatThrownBy(() -> map.remove(a)).isInstanceOf(UnsupportedOperationException.class);
    assertThatThrownBy(map::clear).isInstanceOf(UnsupportedOperationException.class);
    assertThatThrownBy(() -> map.putAll(Map.of(instanceKey("d"), instance("d"))))
        .isInstanceOf(UnsupportedOperationException.class);
    assertThatThrownBy(() -> map.replaceAll((k, v) -> v.weight(1)))
        .isInstanceOf(UnsupportedOperationException.class);
    assertThatThrownBy(() -> map.merge(a, instance("a"), (x, y) -> y.weight(1)))
        .isInstanceOf(UnsupportedOperationException.class);
    assertThatThrownBy(() -> first.setValue(instance("a").weight(1)))
        .isInstanceOf(UnsupportedOperationException.class);
    assertThatThrownBy(() -> map.keySet().remove(a)).isInstanceOf(UnsupportedOperationException.class);
    assertThatThrownBy(() -> map.values().clear()).isInstanceOf(UnsupportedOperationException.class);
    assertThatThrownBy(() -> map.entrySet().clear()).isInstanceOf(UnsupportedOperationException.class);
    assertThatThrownBy(() -> EndpointSet.EMPTY.asMap().clear()).isInstanceOf(UnsupportedOperationException.class);
    assertThatThrownBy(() -> {
      Iterator<InstanceKey> it = map.keySet().iterator();
      it.next();
      it.remove();
    }).isInstanceOf(UnsupportedOperationException.class);

    assertThat(abc.instances()).containsExactly(instance("a"), instance("b"), instance("c"));
    assertThat(map).hasSize(3).containsEntry(a, instance("a"));
  }

  @Test
  void asMapEqualsAnOrdinaryMapWithTheSameEntries() {
    Map<InstanceKey, Instance> plain = Map.of(
        instanceKey("a"), instance("a"), instanceKey("b"), instance("b"), instanceKey("c"), instance("c"));

    assertThat(abc.asMap()).isEqualTo(plain);
    assertThat(plain).isEqualTo(abc.asMap());
    assertThat(abc.asMap().hashCode()).isEqualTo(plain.hashCode());
  }

  @Test
  void sameInstancesIgnoresTheRevisionButNotTheValues() {
    EndpointSet later = EndpointSet.of(9, List.of(instance("a"), instance("b"), instance("c")));
    EndpointSet moved = EndpointSet.of(9, List.of(instance("a"), instance("b"), instance("c").port(9090)));

    assertThat(abc.sameInstances(later)).isTrue();
    assertThat(abc.sameInstances(moved)).isFalse();
    assertThat(EndpointSet.EMPTY.sameInstances(EndpointSet.of(3, List.of()))).isTrue();
  }

  @Test
  void theDeltaBetweenTwoSetsListsEachKindInKeyPathOrder() {
    EndpointSet before = EndpointSet.of(1, List.of(instance("e"), instance("b"), instance("d"), instance("a")));
    EndpointSet after = EndpointSet.of(2,
        List.of(instance("f"), instance("c"), instance("d").weight(5), instance("a").weight(5), instance("b")));

    EndpointDelta delta = EndpointDelta.between(EndpointDelta.Kind.RESYNC, before, after);

    assertThat(delta.added()).containsExactly(instance("c"), instance("f"));
    assertThat(delta.removed()).containsExactly(instance("e"));
    assertThat(delta.changed()).containsExactly(instance("a").weight(5), instance("d").weight(5));
    assertThat(EndpointDelta.between(EndpointDelta.Kind.RESYNC, after, after).isEmpty()).isTrue();
    assertThat(EndpointDelta.between(EndpointDelta.Kind.SNAPSHOT, EndpointSet.EMPTY, after).added())
        .containsExactlyElementsOf(after.instances());
  }
}
