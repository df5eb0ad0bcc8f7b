package dev.muster.cli;

import static org.assertj.core.api.Assertions.assertThat;

import dev.muster.testing.ChildProcess;
import dev.muster.testing.LeakCheck;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Test;

/**
 * Runs after every other class of this module (see junit-platform.properties) and checks that neither an etcd
 * process nor a {@code muster} process the ITs started is still alive.
 */
@Order(Integer.MAX_VALUE)
class NoLeakedProcessesIT {
  @Test
  void everyEtcdAndMusterProcessTheSuiteStartedIsGone() {
    assertThat(LeakCheck.started()).as("the suite started etcd processes").isNotEmpty();
    assertThat(LeakCheck.stillAlive()).as("etcd processes still alive after the suite").isEmpty();
    assertThat(ChildProcess.everStarted()).as("the suite started muster processes").isNotEmpty();
    assertThat(ChildProcess.stillAlive()).as("muster processes still alive after the suite").isEmpty();
  }
}
