package dev.muster.chaos;

import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/** CI's fixed set on three members ({@code chaos-seeds.txt}), side by side: leader kills, majority loss. */
@Timeout(value = 6, unit = TimeUnit.MINUTES)
@Tag("etcd-versions") // also run on etcd 3.4.23: see the etcd-3.4 failsafe execution
class ChaosSeedsClusterIT {
  @Test
  void everyFixedSeedOnThreeMembersKeepsEveryInvariant(@TempDir Path out) throws Exception {
    List<Long> seeds = FixedSeeds.fromFile(3);
    FixedSeeds.run(seeds, 3, seeds.size(), null, out);
  }
}
