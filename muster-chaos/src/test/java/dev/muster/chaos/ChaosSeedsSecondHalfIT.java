package dev.muster.chaos;

import java.nio.file.Path;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/** The second half of CI's fixed one-member seeds (see {@link ChaosSeedsIT}), one at a time. */
@Timeout(value = 6, unit = TimeUnit.MINUTES)
@Tag("etcd-versions") // also run on etcd 3.4.23: see the etcd-3.4 failsafe execution
class ChaosSeedsSecondHalfIT {
  @Test
  void theSecondHalfOfTheFixedSeedsOnOneMemberKeepsEveryInvariant(@TempDir Path out) throws Exception {
    FixedSeeds.run(FixedSeeds.half(FixedSeeds.fromFile(1), 1), 1, 1, null, out);
  }
}
