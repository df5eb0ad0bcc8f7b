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
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * The checker can fail: with the negative-control resume ("from now", which misses what happened during a
 * break) it must report a divergence, write the seed, the replay command, the steps and the shortest failing
 * prefix, and exit non-zero.
 */
@Timeout(value = 4, unit = TimeUnit.MINUTES)
@Tag("etcd-versions") // also run on etcd 3.4.23: see the etcd-3.4 failsafe execution
class ChaosNegativeControlIT {
  @TempDir
  Path out;

  @Test
  void aCacheThatResumesFromNowIsCaughtWithItsSeedStepsAndShortestFailingPrefix() throws Exception {
    // Seed 31's step 3 puts k15 during a 765 ms cut; before it, only a cut that deletes a key nobody wrote (no
    // event to miss), so no earlier step can lose an event first. (Seed 7, used before, had a 2 s blackhole at step 6 that loses events too, but only when stall
    // detection fires before the blackhole heals: a busy machine moved its divergence from step 7 to step 6.)
    long seed = 31;
    ByteArrayOutputStream progress = new ByteArrayOutputStream();
    ChaosConfig config = new ChaosConfig(0, 0, List.of(seed), 20, 1, 1, Duration.ofSeconds(5), out, true, true);

    Chaos.Outcome outcome = new Chaos(config, new PrintStream(progress, true, StandardCharsets.UTF_8)).run();

    String failures = Files.readString(out.resolve("failures.txt"));
    System.out.println(progress.toString(StandardCharsets.UTF_8) + failures);
    assertThat(outcome.passed()).isFalse();
    assertThat(outcome.divergences()).isEqualTo(1);
    assertThat(failures).contains("seed 31", "./muster chaos --seed 31 --schedules 1", "--negative-control",
        "diverged at step 3", "still differs from etcd", "missing [v2/k15]",
        "minimal failing prefix: the first 4 step(s) fail alone", "cut 765ms [put k15 w99, del k5]",
        "<== the invariants failed after this step");
    assertThat(Files.readString(out.resolve("summary.txt"))).contains("divergences 1");
  }
}
