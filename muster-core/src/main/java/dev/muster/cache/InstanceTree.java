package dev.muster.cache;

import dev.muster.registry.Instance;
import dev.muster.registry.InstanceKey;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;
import java.util.NoSuchElementException;

/**
 * A persistent (never modified, structurally shared) weight-balanced search tree of instances, ordered by their
 * key path ({@link KeyPathOrder}). The endpoint set's representation.
 *
 * <p>Why our own and not pcollections' {@code TreePMap}, which the set used before: a map's node holds the key
 * and the value, so every cached instance cost a map node (40 B) and an {@link InstanceKey} (32 B) besides the
 * instance. An instance carries its key's four fields already, so a node here holds only the instance (32 B) and
 * compares by its fields: 40 B less per cached instance, and no key built per {@code plus}.
 *
 * <p>The balance is Adams' weight-balanced tree with the parameters of Haskell's {@code Data.Map}
 * (delta 3, ratio 2; Straka, "Adams' trees revisited", 2011, proves them correct for one insertion or deletion
 * between rebalances): a node's subtrees differ in size by at most 3×, so a child holds at most 3/4 of its
 * parent's weight and the height is at most log(n + 1) / log(4/3), about 2.4 log2(n + 1): 32 levels at 10,000
 * instances (14 for a set built from a snapshot). {@link #size} is a field.
 * {@code plus} and {@code minus} copy the O(log n) nodes on the path to the changed key and share the rest.
 *
 * <p>Stateless; the nodes are immutable, so a tree is safe to read from any thread once published.
 */
final class InstanceTree {
  static final int DELTA = 3; // package-private for the invariant check in InstanceTreeTest
  private static final int RATIO = 2;

  /**
   * A tree node: an instance, the etcd revision that last wrote its record ({@code mod_revision}, 0 when not known;
   * the cache's audit compares it with etcd's), its two subtrees (null when empty), and its size.
   */
  static final class Node {
    final Instance instance;
    final long modRevision;
    final Node left;
    final Node right;
    final int size;

    Node(Instance instance, Node left, Node right) { // package-private for tests; the tree builds its own
      this(instance, 0, left, right);
    }

    Node(Instance instance, long modRevision, Node left, Node right) {
      this.instance = instance;
      this.modRevision = modRevision;
      this.left = left;
      this.right = right;
      this.size = size(left) + size(right) + 1;
    }
  }

  private InstanceTree() {}

  static int size(Node tree) {
    return tree == null ? 0 : tree.size;
  }

  /** The instance keyed {@code key}, or null. */
  static Instance get(Node tree, InstanceKey key) {
    Node n = node(tree, key);
    return n == null ? null : n.instance;
  }

  /** The node keyed {@code key}, or null. */
  static Node node(Node tree, InstanceKey key) {
    Node n = tree;
    while (n != null) {
      int c = KeyPathOrder.compare(key, n.instance);
      if (c == 0) {
        return n;
      }
      n = c < 0 ? n.left : n.right;
    }
    return null;
  }

  /** {@code tree} with {@code instance} added (mod revision not known: 0). */
  static Node plus(Node tree, Instance instance) {
    return plus(tree, instance, 0);
  }

  /**
   * {@code tree} with {@code instance} (written at {@code modRevision}) added or replacing the one with its key;
   * {@code tree} itself if it holds it already.
   */
  static Node plus(Node tree, Instance instance, long modRevision) {
    if (tree == null) {
      return new Node(instance, modRevision, null, null);
    }
    int c = KeyPathOrder.compare(instance, tree.instance);
    if (c == 0) {
      return tree.instance == instance && tree.modRevision == modRevision ? tree
          : new Node(instance, modRevision, tree.left, tree.right);
    }
    if (c < 0) {
      Node left = plus(tree.left, instance, modRevision);
      return left == tree.left ? tree : balance(tree, left, tree.right);
    }
    Node right = plus(tree.right, instance, modRevision);
    return right == tree.right ? tree : balance(tree, tree.left, right);
  }

  /** {@code tree} without the instance keyed {@code key}; {@code tree} itself if there is none. */
  static Node minus(Node tree, InstanceKey key) {
    if (tree == null) {
      return null;
    }
    int c = KeyPathOrder.compare(key, tree.instance);
    if (c == 0) {
      return glue(tree.left, tree.right);
    }
    if (c < 0) {
      Node left = minus(tree.left, key);
      return left == tree.left ? tree : balance(tree, left, tree.right);
    }
    Node right = minus(tree.right, key);
    return right == tree.right ? tree : balance(tree, tree.left, right);
  }

  /** A tree of {@code instances}, their mod revisions not known (0). */
  static Node of(List<Instance> instances) {
    return of(instances, null);
  }

  /**
   * A tree of {@code instances}; of two with the same key, the later one in the list wins. O(n) when they come
   * sorted (a range from etcd does), O(n log n) otherwise. {@code modRevisions}, when not null, holds each
   * instance's mod revision at the same index; else they are 0.
   */
  static Node of(List<Instance> instances, long[] modRevisions) {
    Integer[] order = new Integer[instances.size()];
    for (int i = 0; i < order.length; i++) {
      order[i] = i;
    }
    // stable: equal keys keep their order, so the last of a run is the later
    java.util.Arrays.sort(order, (a, b) -> KeyPathOrder.compare(instances.get(a), instances.get(b)));
    int kept = 0;
    for (int i = 0; i < order.length; i++) {
      if (i + 1 < order.length && KeyPathOrder.compare(instances.get(order[i]), instances.get(order[i + 1])) == 0) {
        continue; // a later instance with this key follows
      }
      order[kept++] = order[i];
    }
    return build(instances, modRevisions, order, 0, kept);
  }

  /** The in-order walk: instances in key-path order. */
  static Iterator<Instance> iterator(Node tree) {
    InOrder nodes = new InOrder(tree);
    return new Iterator<>() {
      @Override
      public boolean hasNext() {
        return nodes.hasNext();
      }

      @Override
      public Instance next() {
        return nodes.next().instance;
      }
    };
  }

  /** The in-order walk over the nodes (instance and mod revision). */
  static Iterator<Node> nodes(Node tree) {
    return new InOrder(tree);
  }

  /** The same instances in both? O(1) for one tree, else O(n). */
  static boolean sameInstances(Node a, Node b) {
    if (a == b) {
      return true;
    }
    if (size(a) != size(b)) {
      return false;
    }
    Iterator<Instance> as = iterator(a);
    Iterator<Instance> bs = iterator(b);
    while (as.hasNext()) {
      if (!as.next().equals(bs.next())) {
        return false;
      }
    }
    return true;
  }

  private static Node build(List<Instance> instances, long[] modRevisions, Integer[] order, int from, int to) {
    if (from >= to) {
      return null;
    }
    int mid = (from + to) >>> 1;
    int at = order[mid];
    return new Node(instances.get(at), modRevisions == null ? 0 : modRevisions[at],
        build(instances, modRevisions, order, from, mid), build(instances, modRevisions, order, mid + 1, to));
  }

  /** The two subtrees of a removed node joined; every key in {@code left} is below every key in {@code right}. */
  private static Node glue(Node left, Node right) {
    if (left == null) {
      return right;
    }
    if (right == null) {
      return left;
    }
    if (left.size > right.size) {
      return balance(maxNode(left), withoutMax(left), right);
    }
    return balance(minNode(right), left, withoutMin(right));
  }

  static Instance min(Node tree) {
    return minNode(tree).instance;
  }

  static Instance max(Node tree) {
    return maxNode(tree).instance;
  }

  private static Node minNode(Node tree) {
    Node n = tree;
    while (n.left != null) {
      n = n.left;
    }
    return n;
  }

  private static Node maxNode(Node tree) {
    Node n = tree;
    while (n.right != null) {
      n = n.right;
    }
    return n;
  }

  private static Node withoutMin(Node tree) {
    return tree.left == null ? tree.right : balance(tree, withoutMin(tree.left), tree.right);
  }

  private static Node withoutMax(Node tree) {
    return tree.right == null ? tree.left : balance(tree, tree.left, withoutMax(tree.right));
  }

  /** A node with {@code n}'s own (instance, mod revision) over {@code left} and {@code right}. */
  private static Node with(Node n, Node left, Node right) {
    return new Node(n.instance, n.modRevision, left, right);
  }

  /**
   * A node of {@code top}'s own instance, {@code left} and {@code right}, rotated if one side outweighs the other by
   * 3×. Only {@code top}'s instance and mod revision are used, not its subtrees.
   */
  private static Node balance(Node top, Node left, Node right) {
    int l = size(left);
    int r = size(right);
    if (l + r <= 1) {
      return with(top, left, right);
    }
    if (r > DELTA * l) {
      return size(right.left) < RATIO * size(right.right)
          ? with(right, with(top, left, right.left), right.right)
          : with(right.left, with(top, left, right.left.left), with(right, right.left.right, right.right));
    }
    if (l > DELTA * r) {
      return size(left.right) < RATIO * size(left.left)
          ? with(left, left.left, with(top, left.right, right))
          : with(left.right, with(left, left.left, left.right.left), with(top, left.right.right, right));
    }
    return with(top, left, right);
  }

  private static final class InOrder implements Iterator<Node> {
    private final ArrayDeque<Node> path = new ArrayDeque<>();

    InOrder(Node tree) {
      descend(tree);
    }

    private void descend(Node from) {
      for (Node n = from; n != null; n = n.left) {
        path.push(n);
      }
    }

    @Override
    public boolean hasNext() {
      return !path.isEmpty();
    }

    @Override
    public Node next() {
      if (path.isEmpty()) {
        throw new NoSuchElementException();
      }
      Node n = path.pop();
      descend(n.right);
      return n;
    }
  }
}
