package dev.muster.bench.memory;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import org.openjdk.jol.info.ClassLayout;
import org.openjdk.jol.vm.VM;
import org.openjdk.jol.vm.VirtualMachine;

/**
 * JOL's start-up, without its console noise: on first use JOL tries to attach an agent to this JVM (for
 * {@code Instrumentation.getObjectSize}) and, on JDK 17 without {@code -Djdk.attach.allowAttachSelf} at launch,
 * prints a warning to {@code System.out} and falls back to computing each object's size from its field layout
 * (the same figures on HotSpot: headers, compressed references, 8-byte alignment). The attempt is skipped and the
 * warning kept for the notes instead of the table. And {@code Unsafe.objectFieldOffset} throws for a record's
 * fields ({@code Instance}, {@code InstanceKey}, ...), so JOL is told to find offsets its other way
 * ({@code jol.magicFieldOffset}). Both are set here, before JOL's first use: the user passes no flag. JOL also
 * prints once that it cannot read {@code @Contended}; that is triggered here too, with the output captured.
 *
 * <p>Thread-safe.
 */
final class Jol {
  private static String startup;

  private Jol() {}

  /** Initializes JOL once, with {@code System.out} captured; returns what it printed (trimmed; may be empty). */
  static synchronized String quiet() {
    if (startup == null) {
      System.setProperty("jol.skipDynamicAttach", "true"); // the layout model is used either way; no attach
      // Unsafe.objectFieldOffset refuses the fields of records and hidden classes (lambdas) on JDK 17; JOL then
      // finds a field's offset by writing a marker value through reflection and looking for it ("magic").
      System.setProperty("jol.magicFieldOffset", "true");
      PrintStream out = System.out;
      ByteArrayOutputStream captured = new ByteArrayOutputStream();
      System.setOut(new PrintStream(captured, true, StandardCharsets.UTF_8));
      try {
        VM.current();
        // Its first class with a @Contended field (Thread has some) prints that it may not read the annotation
        // (java.base does not export it); the fields' real offsets, which the sizes come from, are read anyway.
        ClassLayout.parseClass(Thread.class);
      } finally {
        System.setOut(out);
      }
      startup = captured.toString(StandardCharsets.UTF_8).trim();
    }
    return startup;
  }

  /** One line on how JOL sizes objects in this VM. */
  static String describe() {
    String printed = quiet();
    VirtualMachine vm = VM.current();
    return String.format("JOL 0.17, sizes from this VM's field layout (%d-byte object headers, %d-byte alignment)%s",
        vm.objectHeaderSize(), vm.objectAlignment(), printed.contains("Instrumentation")
            ? "; no Instrumentation agent (JOL's start-up warnings kept out of the table)" : "");
  }
}
