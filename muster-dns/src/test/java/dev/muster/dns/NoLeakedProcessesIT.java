package dev.muster.dns;

import static org.assertj.core.api.Assertions.assertThat;

import dev.muster.testing.LeakCheck;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Test;

/** Runs after every other class of this module (see junit-platform.properties) and checks nothing is left. */
@Order(Integer.MAX_VALUE)
class NoLeakedProcessesIT {
  @Test
  void everyEtcdProcessTheSuiteStartedIsGone() {
    assertThat(LeakCheck.started()).as("the suite started etcd processes").isNotEmpty();
    assertThat(LeakCheck.stillAlive()).as("etcd processes still alive after the suite").isEmpty();
  }
}
