package dev.muster.bench.support;

import dev.muster.testing.ChildProcess;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

/**
 * How the bench starts a JVM from its own jar ({@code java FLAGS -cp muster-bench.jar MAIN ARGS}) as a
 * muster-testing {@link ChildProcess}: a provider that a measurement kills with SIGKILL, or the ZooKeeper server.
 * Its stdout goes to {@code DIR/NAME.out} (the providers write JSON lines there), stderr to {@code DIR/NAME.err}.
 */
public final class Jvms {
  /**
   * For provider JVMs: muster-testing's fast-start flags, and a heap cap, since twenty of them start at once on
   * two cores next to etcd.
   */
  public static final List<String> PROVIDER_FLAGS = flags(ChildProcess.FAST_START_JVM_FLAGS, "-Xmx256m");

  private Jvms() {}

  /** Starts {@code mainClass} with {@code args} and {@link #PROVIDER_FLAGS}, from the class path this JVM runs. */
  public static ChildProcess start(Path dir, String name, String mainClass, List<String> args) {
    return start(dir, name, PROVIDER_FLAGS, mainClass, args);
  }

  /**
   * An environment variable naming a directory: when set, each child JVM that profiles its burst ({@link
   * BurstProfile}) writes a JFR recording of it there as {@code NAME.jfr}. Unset in every committed run.
   */
  public static final String JFR_ENV = "MUSTER_BENCH_JFR";

  /** As {@link #start(Path, String, String, List)}, with {@code jvmFlags} instead of {@link #PROVIDER_FLAGS}. */
  public static ChildProcess start(Path dir, String name, List<String> jvmFlags, String mainClass,
      List<String> args) {
    List<String> rest = new ArrayList<>(List.of("-cp", System.getProperty("java.class.path"), mainClass));
    rest.addAll(args);
    String jfr = System.getenv(JFR_ENV);
    if (jfr != null && !jfr.isBlank()) { // a profile of each child JVM, for where a step's time goes
      List<String> withJfr = new ArrayList<>(jvmFlags);
      withJfr.add("-D" + BurstProfile.PROPERTY + "=" + Path.of(jfr).toAbsolutePath().resolve(name + ".jfr"));
      jvmFlags = withJfr;
    }
    return ChildProcess.start(name, ChildProcess.javaCommand(jvmFlags, rest), dir.resolve(name + ".out"),
        dir.resolve(name + ".err"));
  }

  private static List<String> flags(List<String> base, String... more) {
    List<String> all = new ArrayList<>(base);
    all.addAll(List.of(more));
    return List.copyOf(all);
  }
}
