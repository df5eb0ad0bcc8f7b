package dev.muster.cli;

import static org.assertj.core.api.Assertions.assertThat;

import dev.muster.testing.ChildProcess;
import dev.muster.testing.EtcdBinary;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

/**
 * Runs {@code muster lab SCENARIO...} through the jar, on this JVM's etcd binaries (named with {@code --etcd-bin} and
 * {@code --etcd-old-bin}), and returns its output.txt, every scenario passed.
 */
final class LabSubset {
  private LabSubset() {}

  static String run(Path out, List<String> scenarios) throws Exception {
    List<String> args = new ArrayList<>(List.of("lab"));
    args.addAll(scenarios);
    args.addAll(List.of("--out", out.toString(), "--etcd-bin", EtcdBinary.locate().toString()));
    EtcdBinary.locateOld().ifPresent(old -> args.addAll(List.of("--etcd-old-bin", old.toString())));
    try (ChildProcess lab = MusterJar.start(args.toArray(String[]::new))) {
      int exit = lab.exitCode(Duration.ofMinutes(5));
      String table = Files.readString(out.resolve("output.txt"));
      System.out.println(table);
      assertThat(exit).as("lab exit; stdout %s; stderr %s", lab.stdout(), lab.stderr()).isZero();
      assertThat(table).contains(scenarios.size() + " of " + scenarios.size() + " scenarios passed");
      assertThat(lab.stdout().get(0)).as("the header names the etcd").containsPattern("on etcd 3\\.\\d+\\.\\d+ ");
      assertThat(out.resolve("env.txt")).content().contains("etcd Version: 3.").contains("cores");
      assertThat(out.resolve("LIMITS.md")).exists();
      return table;
    }
  }
}
