package dev.muster.example.spring;

import static org.assertj.core.api.Assertions.assertThat;

import dev.muster.testing.ChildProcess;
import dev.muster.testing.LeakCheck;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Test;

/** Runs after every other class of this module (see junit-platform.properties) and checks nothing is left: no etcd and, through ChildProcess, no Spring application. */
@Order(Integer.MAX_VALUE)
class NoLeakedProcessesIT {
  @Test
  void everyEtcdProcessTheSuiteStartedIsGone() {
    assertThat(LeakCheck.started()).as("the suite started etcd processes").isNotEmpty();
    assertThat(LeakCheck.stillAlive()).as("etcd processes still alive after the suite").isEmpty();
  }

  @Test
  void everySpringApplicationTheSuiteStartedIsGone() {
    assertThat(ChildProcess.everStarted()).as("the suite started Spring applications").isNotEmpty();
    assertThat(ChildProcess.stillAlive()).as("applications still alive after the suite").isEmpty();
  }
}
