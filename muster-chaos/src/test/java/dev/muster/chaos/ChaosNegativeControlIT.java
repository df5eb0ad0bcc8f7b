package dev.muster.chaos;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * The checker can fail: with the negative-control resume ("from now", which misses what happened during a
 * break) it must report a divergence, write the seed, the replay command, the steps and the shortest failing
 * prefix, and exit non-zero.
 */
@Timeout(value = 4, unit = TimeUnit.MINUTES)
class ChaosNegativeControlIT {
  @TempDir
  Path out;

  @Test
  void aCacheThatResumesFromNowIsCaughtWithItsSeedStepsAndShortestFailingPrefix() throws Exception {
    long seed = 7; // its step 7 deletes k14 during a 26 ms cut
    ByteArrayOutputStream progress = new ByteArrayOutputStream();
    ChaosConfig config = new ChaosConfig(0, 0, List.of(seed), 20, 1, 1, Duration.ofSeconds(5), out, true, true);

    Chaos.Outcome outcome = new Chaos(config, new PrintStream(progress, true, StandardCharsets.UTF_8)).run();

    String failures = Files.readString(out.resolve("failures.txt"));
    System.out.println(progress.toString(StandardCharsets.UTF_8) + failures);
    assertThat(outcome.passed()).isFalse();
    assertThat(outcome.divergences()).isEqualTo(1);
    assertThat(failures).contains("seed 7", "./muster chaos --seed 7 --schedules 1", "--negative-control",
        "diverged at step 7", "still differs from etcd", "extra (deleted in etcd) [v1/k14]",
        "minimal failing prefix: the first ", "step(s) fail alone", "cut 26ms [del k14]",
        "<== the invariants failed after this step");
    assertThat(Files.readString(out.resolve("summary.txt"))).contains("divergences 1");
  }
}
