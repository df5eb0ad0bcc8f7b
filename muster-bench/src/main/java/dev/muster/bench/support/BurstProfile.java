package dev.muster.bench.support;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Path;
import jdk.jfr.Configuration;
import jdk.jfr.Recording;

/**
 * A JFR recording of one burst in a child JVM (JFR's {@code profile} settings: execution samples every 10 ms,
 * allocation, locks), started just before the burst and written just after it, when the JVM was started with
 * {@link #PROPERTY} (see {@link Jvms#JFR_ENV}); otherwise nothing. A child JVM is killed, so JFR's dump on exit
 * would never run.
 */
public final class BurstProfile implements AutoCloseable {
  /** The system property naming the file to write. */
  public static final String PROPERTY = "muster.bench.jfr";

  private final Recording recording;
  private final Path file;

  private BurstProfile(Recording recording, Path file) {
    this.recording = recording;
    this.file = file;
  }

  /** Starts recording if this JVM was asked to. */
  public static BurstProfile start() {
    String to = System.getProperty(PROPERTY);
    if (to == null) {
      return new BurstProfile(null, null);
    }
    try {
      Recording r = new Recording(Configuration.getConfiguration("profile"));
      r.start();
      return new BurstProfile(r, Path.of(to));
    } catch (IOException | java.text.ParseException e) {
      throw new IllegalStateException("cannot start JFR: " + e.getMessage(), e);
    }
  }

  /** Stops recording and writes it. */
  @Override
  public void close() {
    if (recording == null) {
      return;
    }
    recording.stop();
    try {
      recording.dump(file);
    } catch (IOException e) {
      throw new UncheckedIOException("cannot write " + file + ": " + e.getMessage(), e);
    } finally {
      recording.close();
    }
  }
}
