package dev.muster.testing;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;

class EtcdBinaryIT {
  @Test
  void reportsTheVersionOfTheBinaryItLocates() {
    assertThat(EtcdBinary.version()).hasValueSatisfying(v -> assertThat(v).matches("3\\.\\d+\\.\\d+"));
  }
}
