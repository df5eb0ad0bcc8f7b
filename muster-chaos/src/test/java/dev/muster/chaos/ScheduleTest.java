package dev.muster.chaos;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.EnumSet;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import org.junit.jupiter.api.Test;

class ScheduleTest {
  @Test
  void theSameSeedAlwaysGivesTheSameSteps() {
    assertThat(Schedule.generate(0, 42, 1, 50).steps()).isEqualTo(Schedule.generate(7, 42, 1, 50).steps());
    assertThat(Schedule.generate(0, 42, 1, 50).steps()).isNotEqualTo(Schedule.generate(0, 43, 1, 50).steps());
  }

  @Test
  void seedsFollowEachOtherSoOneScheduleCanBeReplayedByItsOwnSeed() {
    assertThat(Schedule.next(1)).isEqualTo(Schedule.next(1)).isNotEqualTo(1);
    assertThat(Schedule.next(Schedule.next(1))).isNotEqualTo(Schedule.next(1));
  }

  @Test
  void aPrefixIsTheFirstStepsOfTheSameSchedule() {
    Schedule s = Schedule.generate(3, 9, 3, 20);

    assertThat(s.prefix(5).steps()).isEqualTo(s.steps().subList(0, 5));
    assertThat(s.prefix(5).seed()).isEqualTo(9);
    assertThat(s.prefix(99).steps()).hasSize(20);
  }

  @Test
  void oneMemberNeverGetsLeaderKillsMajorityLossOrRollingUpgradesAndThreeMembersGetEveryOperation() {
    Set<Op> one = EnumSet.noneOf(Op.class);
    Set<Op> three = EnumSet.noneOf(Op.class);
    for (long seed = 0; seed < 200; seed++) {
      Schedule.generate(0, seed, 1, 20).steps().forEach(s -> one.add(s.op()));
      Schedule.generate(0, seed, 3, 20).steps().forEach(s -> three.add(s.op()));
    }

    assertThat(one).doesNotContain(Op.LEADER_KILL, Op.MAJORITY_LOSS, Op.ROLLING_UPGRADE);
    assertThat(one).containsAll(EnumSet.complementOf(EnumSet.of(Op.LEADER_KILL, Op.MAJORITY_LOSS,
        Op.ROLLING_UPGRADE)));
    assertThat(three).containsExactlyInAnyOrder(Op.values());
  }

  @Test
  void aTransactionNeverNamesAKeyTwice() {
    for (long seed = 0; seed < 500; seed++) {
      for (Step s : Schedule.generate(0, seed, 1, 20).steps()) {
        if (s.op() == Op.TXN) {
          Set<Integer> keys = new HashSet<>();
          for (Step.Write w : s.writes()) {
            assertThat(keys.add(w.key())).as("seed %d: %s", seed, s.describe()).isTrue();
          }
        }
      }
    }
  }

  @Test
  void everyStepDescribesItselfWithItsParameters() {
    List<Step> steps = Schedule.generate(0, 5, 3, 200).steps();

    assertThat(steps).allSatisfy(s -> assertThat(s.describe()).startsWith(
        switch (s.op()) {
          case DELETE_COMPACT -> "cut, ";
          case RESTART -> "etcd kill -9";
          case LEADER_KILL -> "kill leader";
          case MAJORITY_LOSS -> "kill majority";
          default -> s.op().label().substring(0, 3);
        }));
    assertThat(new Step(Op.CUT, 420, 0, 0, List.of(new Step.Write(false, 3, 7), new Step.Write(true, 4, 1)))
        .describe()).isEqualTo("cut 420ms [put k3 w7, del k4]");
  }
}
