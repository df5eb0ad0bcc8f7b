package dev.muster.retry;

import static org.assertj.core.api.Assertions.assertThat;

import dev.muster.balance.FakeTicker;
import java.time.Duration;
import org.junit.jupiter.api.Test;

class RetryBudgetTest {
  private final FakeTicker ticker = new FakeTicker();
  private final RetryBudget budget = new RetryBudget(RetryConfig.defaults(), ticker);

  private int withdrawAll() {
    int n = 0;
    while (budget.tryWithdraw()) {
      n++;
    }
    return n;
  }

  private void deposit(int requests) {
    for (int i = 0; i < requests; i++) {
      budget.deposit();
    }
  }

  @Test
  void withNoTrafficTheFloorAllowsTenRetriesPerSecondOfTheWindow() {
    assertThat(budget.available()).isEqualTo(100);
    assertThat(withdrawAll()).isEqualTo(100);
    assertThat(budget.refused()).isEqualTo(1);
  }

  @Test
  void twentyPercentOfTheRequestsMayBeRetriedOnTopOfTheFloor() {
    deposit(1000);

    assertThat(withdrawAll()).isEqualTo(200 + 100);
    assertThat(budget.deposits()).isEqualTo(1000);
    assertThat(budget.withdrawals()).isEqualTo(300);
  }

  @Test
  void everyRefusalIsCounted() {
    withdrawAll();

    budget.tryWithdraw();
    budget.tryWithdraw();

    assertThat(budget.refused()).isEqualTo(3);
  }

  @Test
  void depositsExpireAfterTheWindow() {
    deposit(1000);

    ticker.advance(Duration.ofSeconds(11));

    assertThat(budget.available()).isEqualTo(100);
  }

  @Test
  void withdrawalsExpireAfterTheWindowSoTheFloorComesBack() {
    withdrawAll();

    ticker.advance(Duration.ofSeconds(5));
    assertThat(budget.tryWithdraw()).isFalse();
    ticker.advance(Duration.ofSeconds(6));

    assertThat(withdrawAll()).isEqualTo(100);
  }

  @Test
  void theWindowSlidesOneBucketAtATime() {
    deposit(500); // second 0
    ticker.advance(Duration.ofSeconds(5));
    deposit(500); // second 5

    ticker.advance(Duration.ofSeconds(5)); // second 10: the first 500 fell out
    assertThat(budget.available()).isEqualTo(100 + 100);
    ticker.advance(Duration.ofSeconds(5)); // second 15: both fell out
    assertThat(budget.available()).isEqualTo(100);
  }

  @Test
  void aZeroPercentBudgetAllowsOnlyTheFloor() {
    RetryBudget strict = new RetryBudget(
        RetryConfig.builder().budget(Duration.ofSeconds(10), 0.0, 1).build(), ticker);
    for (int i = 0; i < 1000; i++) {
      strict.deposit();
    }

    assertThat(strict.available()).isEqualTo(10);
  }
}
