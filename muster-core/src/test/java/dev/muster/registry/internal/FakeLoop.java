package dev.muster.registry.internal;

import dev.muster.testkit.FakeClock;
import java.time.Instant;

/**
 * The registrar's loop on a {@link FakeClock}: its {@link RegistrarDriver.Timer}, with {@link #spend} standing for
 * the time a blocking etcd call takes. Not thread-safe; the test thread drives it.
 */
final class FakeLoop extends FakeClock implements RegistrarDriver.Timer {
  FakeLoop() {
    super(5_000_000_000L, Instant.parse("2026-12-01T10:00:00Z"));
  }
}
