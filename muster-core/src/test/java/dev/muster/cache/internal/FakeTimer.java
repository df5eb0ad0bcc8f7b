package dev.muster.cache.internal;

import dev.muster.testkit.FakeClock;
import java.time.Instant;

/** The cache driver's {@link CacheDriver.Timer} on a {@link FakeClock}. Not thread-safe; the test thread drives it. */
final class FakeTimer extends FakeClock implements CacheDriver.Timer {
  FakeTimer() {
    super(7_000_000_000L, Instant.parse("2026-11-29T10:00:00Z"));
  }
}
