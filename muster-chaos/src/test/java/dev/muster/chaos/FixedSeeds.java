package dev.muster.chaos;

import static org.assertj.core.api.Assertions.assertThat;

import dev.muster.sign.SigningKey;
import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;

/** Runs schedules of given seeds and asserts that none diverged (the seeds ITs share it). */
final class FixedSeeds {
  private FixedSeeds() {}

  /** The 'chaos' seeds of {@code chaos-seeds.txt} for {@code members}. */
  static List<Long> fromFile(int members) {
    List<Long> seeds = SeedsFile.read(SeedsFile.find(Path.of("")), "chaos", members);
    assertThat(seeds).isNotEmpty();
    return seeds;
  }

  /** The first ({@code half} 0) or second ({@code half} 1) half of {@code seeds}, so two classes run side by side. */
  static List<Long> half(List<Long> seeds, int half) {
    int middle = (seeds.size() + 1) / 2;
    return half == 0 ? seeds.subList(0, middle) : seeds.subList(middle, seeds.size());
  }

  /**
   * Runs {@code seeds} (20 steps each; {@code parallel} side by side) on {@code members} members, the cluster started on
   * {@code upgradeFrom} when it is not null, and asserts every step kept every invariant. Returns what it printed.
   */
  static String run(List<Long> seeds, int members, int parallel, Path upgradeFrom, Path out) throws Exception {
    return run(seeds, members, parallel, upgradeFrom, null, out);
  }

  /** As above, every record the run writes signed by {@code signingKey} (null: none), every cache trusting it. */
  static String run(List<Long> seeds, int members, int parallel, Path upgradeFrom, SigningKey signingKey, Path out)
      throws Exception {
    ByteArrayOutputStream progress = new ByteArrayOutputStream();
    ChaosConfig config = new ChaosConfig(0, 0, seeds, 20, members, parallel, Duration.ofSeconds(60), out, true,
        false, upgradeFrom, signingKey);

    Chaos.Outcome outcome = new Chaos(config, new PrintStream(progress, true, StandardCharsets.UTF_8)).run();

    String printed = progress.toString(StandardCharsets.UTF_8);
    System.out.println(printed);
    assertThat(outcome.passed()).as("%s%n%s", printed, Files.readString(out.resolve("failures.txt"))).isTrue();
    assertThat(outcome.steps()).isEqualTo(20L * seeds.size());
    assertThat(printed).contains("0 divergence(s)", "publications checked against etcd");
    return printed;
  }
}
