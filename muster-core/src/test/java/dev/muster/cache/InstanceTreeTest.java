package dev.muster.cache;

import static dev.muster.cache.Endpoints.instance;
import static dev.muster.cache.Endpoints.trickyName;
import static org.assertj.core.api.Assertions.assertThat;

import dev.muster.registry.Instance;
import dev.muster.registry.InstanceKey;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;
import java.util.Random;
import java.util.TreeMap;
import org.junit.jupiter.api.Test;

/**
 * The persistent tree against a {@link TreeMap} in the same order, over random plus and minus: the same
 * instances in the same order after every step, the balance, order and size invariants at every node, and every
 * earlier tree still holding what it held.
 */
class InstanceTreeTest {
  /** An instance with a tricky id ({@link Endpoints#trickyName}), one of two versions and a random weight. */
  private static Instance random(Random random) {
    String version = random.nextInt(4) == 0 ? "v1-rc" : "v1";
    return instance(trickyName(random)).version(version).weight(random.nextInt(5));
  }

  @Test
  void randomPlusAndMinusMatchATreeMapAndKeepEveryEarlierTree() {
    for (long seed = 1; seed <= 20; seed++) {
      Random random = new Random(seed);
      TreeMap<InstanceKey, Instance> model = new TreeMap<>(KeyPathOrder.INSTANCE);
      InstanceTree.Node tree = null;
      List<InstanceTree.Node> trees = new ArrayList<>();
      List<List<Instance>> models = new ArrayList<>();
      for (int step = 0; step < 1_500; step++) {
        Instance i = random(random);
        if (random.nextInt(3) == 0) {
          InstanceTree.Node next = InstanceTree.minus(tree, i.key());
          boolean had = model.remove(i.key()) != null;
          assertThat(next == tree).as("seed %d step %d: minus of an absent key keeps the tree", seed, step)
              .isEqualTo(!had);
          tree = next;
        } else {
          tree = InstanceTree.plus(tree, i);
          model.put(i.key(), i);
        }
        assertThat(violation(tree)).as("seed %d step %d", seed, step).isNull();
        assertThat(InstanceTree.size(tree)).isEqualTo(model.size());
        assertThat(list(tree)).as("seed %d step %d", seed, step).containsExactlyElementsOf(model.values());
        assertThat(InstanceTree.get(tree, i.key())).isEqualTo(model.get(i.key()));
        if (step % 100 == 0) {
          trees.add(tree);
          models.add(List.copyOf(model.values()));
        }
      }
      for (int k = 0; k < trees.size(); k++) {
        assertThat(list(trees.get(k))).as("seed %d, kept tree %d", seed, k).containsExactlyElementsOf(models.get(k));
      }
    }
  }

  @Test
  void plusOfTheSameInstanceKeepsTheTreeAndOfAnEqualKeyReplacesTheValue() {
    Instance a = instance("a");
    InstanceTree.Node tree = InstanceTree.plus(InstanceTree.plus(null, a), instance("b"));

    assertThat(InstanceTree.plus(tree, a)).isSameAs(tree);
    InstanceTree.Node heavier = InstanceTree.plus(tree, a.weight(7));
    assertThat(InstanceTree.get(heavier, a.key())).isEqualTo(a.weight(7));
    assertThat(InstanceTree.get(tree, a.key())).isEqualTo(a);
    assertThat(InstanceTree.size(heavier)).isEqualTo(2);
  }

  @Test
  void ofSortsKeepsTheLaterOfEqualKeysAndBuildsABalancedTree() {
    Random random = new Random(7);
    List<Instance> all = new ArrayList<>();
    TreeMap<InstanceKey, Instance> model = new TreeMap<>(KeyPathOrder.INSTANCE);
    for (int n = 0; n < 3_000; n++) {
      Instance i = random(random);
      all.add(i);
      model.put(i.key(), i);
    }

    InstanceTree.Node tree = InstanceTree.of(all);

    assertThat(violation(tree)).isNull();
    assertThat(list(tree)).containsExactlyElementsOf(model.values());
    assertThat(InstanceTree.of(List.of())).isNull();
  }

  @Test
  void sameInstancesComparesContentNotShape() {
    List<Instance> abc = List.of(instance("a"), instance("b"), instance("c"));
    InstanceTree.Node built = InstanceTree.of(abc);
    InstanceTree.Node grown = null;
    for (Instance i : List.of(instance("c"), instance("b"), instance("a"))) {
      grown = InstanceTree.plus(grown, i);
    }

    assertThat(InstanceTree.sameInstances(built, grown)).isTrue();
    assertThat(InstanceTree.sameInstances(built, InstanceTree.plus(grown, instance("b").weight(1)))).isFalse();
    assertThat(InstanceTree.sameInstances(built, InstanceTree.minus(grown, instance("b").key()))).isFalse();
    assertThat(InstanceTree.sameInstances(null, null)).isTrue();
  }

  /** The invariant check can fail: on trees built by hand, a chain and one out of order. */
  @Test
  void violationFindsATreeOutOfBalanceOrOutOfOrder() {
    InstanceTree.Node chain = null;
    for (String id : List.of("e", "d", "c", "b", "a")) {
      chain = new InstanceTree.Node(instance(id), null, chain); // each node's right subtree holds the rest
    }
    InstanceTree.Node swapped = new InstanceTree.Node(instance("b"),
        new InstanceTree.Node(instance("c"), null, null), new InstanceTree.Node(instance("a"), null, null));

    assertThat(violation(chain)).contains("out of balance");
    assertThat(violation(swapped)).contains("out of order");
  }

  /**
   * Whether every node holds the balance and order invariants and its size. Returns a description of
   * the first violation, or null.
   */
  static String violation(InstanceTree.Node tree) {
    if (tree == null) {
      return null;
    }
    int l = InstanceTree.size(tree.left);
    int r = InstanceTree.size(tree.right);
    if (tree.size != l + r + 1) {
      return "node " + tree.instance.key() + " has size " + tree.size + ", its subtrees " + l + " + " + r;
    }
    if (l + r > 1 && (l > InstanceTree.DELTA * r || r > InstanceTree.DELTA * l)) {
      return "node " + tree.instance.key() + " is out of balance: " + l + " left, " + r + " right";
    }
    if (tree.left != null && KeyPathOrder.compare(InstanceTree.max(tree.left), tree.instance) >= 0
        || tree.right != null && KeyPathOrder.compare(InstanceTree.min(tree.right), tree.instance) <= 0) {
      return "node " + tree.instance.key() + " is out of order";
    }
    String v = violation(tree.left);
    return v != null ? v : violation(tree.right);
  }

  private static List<Instance> list(InstanceTree.Node tree) {
    List<Instance> out = new ArrayList<>();
    for (Iterator<Instance> it = InstanceTree.iterator(tree); it.hasNext(); ) {
      out.add(it.next());
    }
    return out;
  }
}
