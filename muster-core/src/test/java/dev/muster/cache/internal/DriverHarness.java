package dev.muster.cache.internal;

import static dev.muster.cache.Endpoints.LAYOUT;
import static dev.muster.cache.Endpoints.PREFIX;
import static dev.muster.cache.Endpoints.SERVICE;

import dev.muster.cache.CacheConfig;
import dev.muster.cache.internal.CacheDriver.Header;
import dev.muster.internal.Backoff;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;

/**
 * One {@link CacheDriver} wired to a {@link ScriptedIo}, a {@link FakeTimer}, a {@link RecordingPublisher} and a
 * seeded {@link Backoff}, plus a twin backoff with the same seed so a test can know each delay in advance.
 */
final class DriverHarness {
  static final long SEED = 42;

  final List<String> journal = new ArrayList<>();
  final FakeTimer timer = new FakeTimer();
  final ScriptedIo io = new ScriptedIo(journal);
  final RecordingPublisher publisher = new RecordingPublisher(journal);
  final RevisionApplier applier;
  final CacheConfig config;
  /** Draws the same numbers as the driver's backoff, as long as the test mirrors every draw the driver makes. */
  final Random twinRandom = new Random(SEED);
  final Backoff twin;
  final CacheDriver driver;

  DriverHarness(CacheConfig config) {
    this(config, SnapshotStore.NONE);
  }

  DriverHarness(CacheConfig config, SnapshotStore store) {
    this(config, CacheDriver.ResumeRule.AT_CHECKPOINT, store);
  }

  DriverHarness(CacheConfig config, CacheDriver.ResumeRule rule, SnapshotStore store) {
    this.config = config;
    this.applier = new RevisionApplier(LAYOUT, PREFIX, config.trustedKeys(), timer.clock());
    Backoff backoff = new Backoff(config.backoffBase(), config.backoffCap(), new Random(SEED));
    this.twin = new Backoff(config.backoffBase(), config.backoffCap(), twinRandom);
    this.driver = new CacheDriver(config, rule, applier, io, timer, timer.clock(), timer::nanoTime, backoff, publisher,
        store);
  }

  /** Defaults, with probing off so that only the tests about probing see probes. */
  static CacheConfig.Builder config() {
    return CacheConfig.builder(SERVICE).probe(Duration.ZERO, Duration.ofMillis(500));
  }

  static Header header(long revision) {
    return new Header(ScriptedIo.CLUSTER, revision);
  }

  /** The open stream's number. */
  long stream() {
    return driver.currentStream();
  }

  /** Journal entries from index {@code mark} on. */
  List<String> journalSince(int mark) {
    return new ArrayList<>(journal.subList(mark, journal.size()));
  }

  int mark() {
    return journal.size();
  }
}
