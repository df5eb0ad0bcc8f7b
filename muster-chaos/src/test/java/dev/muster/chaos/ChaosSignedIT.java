package dev.muster.chaos;

import static org.assertj.core.api.Assertions.assertThat;

import dev.muster.sign.SigningKey;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * CI's taste of {@code ./muster chaos --sign} (issue 35): a few of the fixed seeds with every record the run writes
 * signed and every cache trusting only that key, so that signed records (sequences, the registrar's re-signing,
 * the checks of a resync) keep every invariant the unsigned runs do. The 300-schedule run is in docs/chaos.
 */
@Timeout(value = 4, unit = TimeUnit.MINUTES)
class ChaosSignedIT {
  @Test
  void fixedSeedsWithEveryRecordSignedKeepEveryInvariant(@TempDir Path out) throws Exception {
    List<Long> seeds = FixedSeeds.fromFile(1);

    String printed = FixedSeeds.run(seeds.subList(0, Math.min(4, seeds.size())), 1, 2, null,
        SigningKey.generate(), out);

    assertThat(printed).contains("every record signed by key");
  }
}
