package dev.muster.console.internal;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Clock;
import java.time.Instant;
import java.time.ZoneOffset;
import org.junit.jupiter.api.Test;

class EventRingTest {
  private final Clock clock = Clock.fixed(Instant.parse("2026-12-01T10:00:00Z"), ZoneOffset.UTC);

  private static ConsoleEvent.Draft draft(String id) {
    return new ConsoleEvent.Draft("join", "default", "shop", "v1", id, "");
  }

  @Test
  void keepsTheLastEventsNumberedInOrder() {
    EventRing ring = new EventRing(3, clock);
    for (String id : new String[] {"a", "b", "c", "d", "e"}) {
      ring.add(draft(id));
    }
    assertThat(ring.after(0)).extracting(ConsoleEvent::id).containsExactly("c", "d", "e");
    assertThat(ring.after(0)).extracting(ConsoleEvent::seq).containsExactly(3L, 4L, 5L);
    assertThat(ring.after(4)).extracting(ConsoleEvent::id).containsExactly("e");
    assertThat(ring.after(5)).isEmpty();
    assertThat(ring.lastSeq()).isEqualTo(5);
    assertThat(ring.after(0).get(0).at()).isEqualTo(clock.instant());
  }
}
