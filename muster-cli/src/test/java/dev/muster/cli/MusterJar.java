package dev.muster.cli;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import dev.muster.testing.ChildProcess;
import dev.muster.testing.ClassDataArchive;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

/**
 * The real {@code muster.jar} (system property {@code muster.jar}) run as a separate {@code java -jar} process for
 * the ITs, as a muster-testing {@link ChildProcess}: close it (try-with-resources) and it is killed by pid.
 */
final class MusterJar {
  /**
   * JVM flags for the CLI processes the ITs start. They live for seconds, so C1 alone (no C2 compiles competing for
   * the two cores with etcd, the test JVM and the other processes) and the serial collector start them faster and
   * lighter; nothing they are tested for depends on the JIT or the collector. Test processes only: {@code
   * ./muster}, the lab and the bench run the CLI with the JVM's defaults.
   */
  static final List<String> JVM_FLAGS = List.of("-XX:TieredStopAtLevel=1", "-XX:+UseSerialGC");

  /** A run that loads most of what the commands load (picocli, jetcd, gRPC, Netty) and exits 4 at once. */
  private static final List<String> TRAINING = List.of("ls", "--endpoints", "http://127.0.0.1:9");

  private MusterJar() {}

  static Path jar() {
    return Path.of(System.getProperty("muster.jar", "target/muster.jar")).toAbsolutePath();
  }

  /** Starts {@code java JVM_FLAGS -jar muster.jar ARGS...}, with the jar's class-data archive when there is one. */
  static ChildProcess start(String... args) {
    List<String> flags = new ArrayList<>(JVM_FLAGS);
    flags.addAll(ClassDataArchive.flags(jar(), JVM_FLAGS, TRAINING));
    List<String> rest = new ArrayList<>(List.of("-jar", jar().toString()));
    rest.addAll(List.of(args));
    return ChildProcess.start("muster-" + (args.length == 0 ? "" : args[0]), ChildProcess.javaCommand(flags, rest));
  }

  /** Runs {@code muster ARGS...} to completion (at most {@code limit}, else it fails) and returns it, exited. */
  static ChildProcess run(Duration limit, String... args) {
    ChildProcess p = start(args);
    p.exitCode(limit);
    return p;
  }

  /** {@code args} followed by {@code more}: a command and the connection flags it shares with others. */
  static String[] concat(String[] args, String... more) {
    String[] out = java.util.Arrays.copyOf(args, args.length + more.length);
    System.arraycopy(more, 0, out, args.length, more.length);
    return out;
  }

  /**
   * Registers instance {@code a} of {@code service} with the {@code connection} flags (endpoints, TLS, credentials),
   * checks that it printed {@code registered} and that {@code ls} with the same flags lists exactly one instance, then
   * stops it.
   */
  static void assertRegisterThenLsSeesIt(String service, String... connection) {
    try (ChildProcess register = start(concat(new String[] {"register", "--service", service, "--id", "a",
        "--address", "127.0.0.1:9000", "--ttl", "3s"}, connection))) {
      org.awaitility.Awaitility.await().atMost(Duration.ofSeconds(30))
          .until(() -> register.json().eventNames().contains("registered") || !register.isAlive());
      assertThat(register.json().eventNames()).as("%s", register).contains("registered");
      try (ChildProcess ls = run(Duration.ofSeconds(30), concat(new String[] {"ls", service}, connection))) {
        assertThat(ls.exitCode().getAsInt()).as("%s", ls).isZero();
        assertThat(ls.stdout().get(0)).matches("revision \\d+, 1 instance\\(s\\)");
      }
    }
  }

  /** Waits up to 30 s for {@code p}'s first JSON line with {@code "event":EVENT} and returns it. */
  static JsonNode awaitEvent(ChildProcess p, String event) {
    org.awaitility.Awaitility.await(event).atMost(Duration.ofSeconds(30))
        .until(() -> p.json().eventNames().contains(event) || !p.isAlive());
    return p.json().lines().stream().filter(n -> n.path("event").asText().equals(event)).findFirst()
        .orElseThrow(() -> new AssertionError("no " + event + " event: " + p));
  }
}
