package dev.muster.bench.memory;

import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import org.openjdk.jol.info.GraphLayout;
import org.openjdk.jol.info.GraphWalker;
import org.openjdk.jol.util.Multiset;

/**
 * The objects reachable from some roots, as JOL's {@link GraphLayout} counts them (every object once, by identity,
 * with its header and padding as this VM lays it out), kept as a histogram by class.
 *
 * <p>Why not {@link GraphLayout#subtract}: it matches objects by address, and a collection between the two walks
 * moves them. The difference of two footprints ({@link #minus}) is a difference of per-class totals instead. Taken
 * between the walk of {@code owned + shared} and the walk of {@code shared} ({@link #owned}), it is exactly what is
 * reachable from {@code owned} and not from {@code shared}, provided nothing changed between the two walks.
 *
 * <p>An immutable value.
 */
public record Footprint(Map<String, Line> byClass) {
  /** One class's objects: how many, and their bytes. */
  public record Line(String type, long count, long bytes) {}

  public Footprint {
    byClass = Map.copyOf(byClass);
  }

  /** Every object reachable from {@code roots} (JOL's walk: instance fields and array elements, not statics). */
  public static Footprint of(Object... roots) {
    Jol.quiet();
    GraphLayout layout = GraphLayout.parseInstance(roots);
    Multiset<Class<?>> counts = layout.getClassCounts();
    Multiset<Class<?>> sizes = layout.getClassSizes();
    Map<String, Line> lines = new HashMap<>();
    for (Class<?> c : counts.keys()) {
      String name = c.getName();
      Line old = lines.get(name); // two classes of one name (two loaders) are one line
      lines.put(name, new Line(name, counts.count(c) + (old == null ? 0 : old.count()),
          sizes.count(c) + (old == null ? 0 : old.bytes())));
    }
    return new Footprint(lines);
  }

  /** What is reachable from {@code owned} and not from {@code shared}: two walks, see the class comment. */
  public static Footprint owned(Object owned, Object... shared) {
    Object[] both = new Object[shared.length + 1];
    both[0] = owned;
    System.arraycopy(shared, 0, both, 1, shared.length);
    return of(both).minus(of(shared));
  }

  /**
   * Bytes of the byte and char arrays reachable from {@code roots} through a field named {@code _byteBuffers} or
   * {@code _charBuffers}: Jackson's {@code BufferRecycler}, which Jackson keeps per thread (in a ThreadLocal) once
   * that thread has encoded or decoded JSON. Read from JOL's path to each array (only arrays of 1 KB or more).
   */
  public static long recyclerBuffers(Object... roots) {
    Jol.quiet();
    long[] bytes = {0};
    new GraphWalker(r -> {
      if ((r.klass() == byte[].class || r.klass() == char[].class) && r.size() >= 1024) {
        String path = r.path();
        if (path.contains("._byteBuffers.") || path.contains("._charBuffers.")) {
          bytes[0] += r.size();
        }
      }
    }).walk(roots);
    return bytes[0];
  }

  public long bytes() {
    return byClass.values().stream().mapToLong(Line::bytes).sum();
  }

  public long count() {
    return byClass.values().stream().mapToLong(Line::count).sum();
  }

  /** Per-class differences; a class whose count and bytes are both equal in the two drops out. */
  public Footprint minus(Footprint other) {
    Map<String, Line> out = new HashMap<>(byClass);
    for (Line o : other.byClass.values()) {
      Line mine = out.get(o.type());
      long count = (mine == null ? 0 : mine.count()) - o.count();
      long bytes = (mine == null ? 0 : mine.bytes()) - o.bytes();
      if (count == 0 && bytes == 0) {
        out.remove(o.type());
      } else {
        out.put(o.type(), new Line(o.type(), count, bytes));
      }
    }
    return new Footprint(out);
  }

  /**
   * The {@code n} classes with the most bytes (largest first, ties by name) of those with at least {@code minBytes},
   * then one line {@code "(other)"} for the rest if there is a rest; the lines' bytes add up to {@link #bytes()}.
   * Differences can be negative (a class with fewer objects after): those are in {@code "(other)"} unless large.
   */
  public List<Line> top(int n, long minBytes) {
    List<Line> sorted = new ArrayList<>(byClass.values());
    sorted.sort(Comparator.comparingLong((Line l) -> Math.abs(l.bytes())).reversed().thenComparing(Line::type));
    List<Line> out = new ArrayList<>();
    long count = 0;
    long bytes = 0;
    int rest = 0;
    for (Line l : sorted) {
      if (out.size() < n && Math.abs(l.bytes()) >= minBytes) {
        out.add(l);
      } else {
        count += l.count();
        bytes += l.bytes();
        rest++;
      }
    }
    if (rest > 0) {
      out.add(new Line("(other)", count, bytes));
    }
    return out;
  }

  /**
   * The top classes as table lines, per {@code units} (e.g. per instance): bytes and objects per unit, share of the
   * total, class (without its package if it is Muster's). Classes under half a byte per unit go to {@code (other)}.
   */
  public List<String> breakdown(int n, long units) {
    long total = bytes();
    List<String> out = new ArrayList<>();
    for (Line l : top(n, Math.max(1, (units + 1) / 2))) {
      out.add(String.format(Locale.ROOT, "%10.1f B %8.2f obj %6.1f%%  %s", l.bytes() / (double) units,
          l.count() / (double) units, total == 0 ? 0.0 : 100.0 * l.bytes() / total, shortName(l.type())));
    }
    return out;
  }

  /** {@code dev.muster.registry.Instance} → {@code Instance}; others (JDK and the rest) keep their package. */
  static String shortName(String type) {
    if (type.startsWith("dev.muster.")) {
      return type.substring(type.lastIndexOf('.') + 1);
    }
    if (type.startsWith("[")) { // JVM array names: [B is byte[], [Ljava.lang.Object; is Object[]
      String t = type.substring(1);
      String element = switch (t) {
        case "B" -> "byte";
        case "C" -> "char";
        case "I" -> "int";
        case "J" -> "long";
        case "Z" -> "boolean";
        case "S" -> "short";
        case "F" -> "float";
        case "D" -> "double";
        default -> t.startsWith("L") && t.endsWith(";") ? shortName(t.substring(1, t.length() - 1)) : shortName(t);
      };
      return element + "[]";
    }
    return type;
  }
}
