package dev.muster.bench.memory;

import dev.muster.bench.support.BenchException;
import java.lang.management.ManagementFactory;
import java.util.HashMap;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import javax.management.JMException;
import javax.management.ObjectName;

/**
 * The live heap by class, as {@code jcmd <pid> GC.class_histogram} prints it, taken in this JVM through the
 * DiagnosticCommand MBean: a full collection, then every live object counted by class. The difference of two
 * ({@link Footprint#minus}) says where a heap delta went, including what JOL's walk cannot reach (objects only
 * static fields hold).
 *
 * <p>Thread-safe (stateless).
 */
final class HeapHistogram {
  /** {@code "   1:   9666   446640  [B (java.base@17.0.15)"}: rank, instances, bytes, class, optional module. */
  private static final Pattern LINE = Pattern.compile("^\\s*\\d+:\\s+(\\d+)\\s+(\\d+)\\s+(\\S+)(?:\\s+\\(.*\\))?\\s*$");

  private HeapHistogram() {}

  /** A full GC and the histogram of what survived it. */
  static Footprint take() {
    try {
      String text = (String) ManagementFactory.getPlatformMBeanServer().invoke(
          new ObjectName("com.sun.management:type=DiagnosticCommand"), "gcClassHistogram",
          new Object[] {new String[0]}, new String[] {String[].class.getName()});
      return parse(text);
    } catch (JMException e) {
      throw new BenchException("no class histogram from the DiagnosticCommand MBean: " + e, e);
    }
  }

  /**
   * What the live heap gained since {@code before} was taken (with {@link #take}), less {@code before}'s own objects
   * (its map, lines and strings: alive now, not yet when it was taken), as JOL sizes them.
   */
  static Footprint since(Footprint before) {
    Footprint own = Footprint.of(before);
    return take().minus(before).minus(own);
  }

  /** The histogram's class lines (the header and the Total line are skipped), by JVM class name. */
  static Footprint parse(String text) {
    Map<String, Footprint.Line> lines = new HashMap<>();
    for (String line : text.split("\n")) {
      Matcher m = LINE.matcher(line);
      if (m.matches()) {
        String type = m.group(3);
        Footprint.Line old = lines.get(type); // one name in two class loaders: two lines, added
        long count = Long.parseLong(m.group(1)) + (old == null ? 0 : old.count());
        long bytes = Long.parseLong(m.group(2)) + (old == null ? 0 : old.bytes());
        lines.put(type, new Footprint.Line(type, count, bytes));
      }
    }
    if (lines.isEmpty()) {
      throw new BenchException("a class histogram without a class line: " + text.lines().findFirst().orElse(""));
    }
    return new Footprint(lines);
  }
}
