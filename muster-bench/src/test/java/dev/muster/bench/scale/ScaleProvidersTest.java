package dev.muster.bench.scale;

import static org.assertj.core.api.Assertions.assertThat;

import dev.muster.registry.RegistrationEvent;
import java.time.Duration;
import java.time.Instant;
import org.junit.jupiter.api.Test;

class ScaleProvidersTest {
  private static RegistrationEvent keepalive(String detail) {
    return new RegistrationEvent(RegistrationEvent.Type.KEEPALIVE, Instant.EPOCH, "a-1", 123, 0, detail,
        Duration.ofSeconds(15));
  }

  @Test
  void readsTheAnswerTimeTheRegistrarReports() {
    assertThat(ScaleProviders.answeredMicros(keepalive("ttl 15s; answered in 1234 us"))).isEqualTo(1234);
  }

  @Test
  void aDetailWithoutTheAnswerTimeIsMinusOne() {
    assertThat(ScaleProviders.answeredMicros(keepalive("ttl 15s"))).isEqualTo(-1);
  }
}
