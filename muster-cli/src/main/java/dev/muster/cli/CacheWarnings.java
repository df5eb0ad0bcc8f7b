package dev.muster.cli;

import ch.qos.logback.classic.Level;
import ch.qos.logback.classic.Logger;
import ch.qos.logback.classic.LoggerContext;
import ch.qos.logback.classic.encoder.PatternLayoutEncoder;
import ch.qos.logback.core.FileAppender;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import org.slf4j.LoggerFactory;

/**
 * Keeps the caches' warnings of a run in a file: an audit's difference (which keys, and how it was found), a resync's
 * reason. The CLI's console shows the caches' errors only (logback.xml); a chaos run's caches are many and its
 * console is the progress lines, so their warnings go to {@code DIR/caches.log} instead, with the INFO lines.
 */
final class CacheWarnings {
  static final String LOGGER = "dev.muster.cache.internal.CacheDriver";

  private CacheWarnings() {}

  /** From now on the cache driver's INFO and above go to {@code file} (created or truncated), not the console. */
  static void keepIn(Path file) {
    try {
      Files.createDirectories(file.toAbsolutePath().getParent());
    } catch (IOException e) {
      throw new UncheckedIOException("cannot create " + file.getParent() + ": " + e.getMessage(), e);
    }
    if (!(LoggerFactory.getILoggerFactory() instanceof LoggerContext context)) {
      return; // not logback (a test's own binding): nothing to redirect
    }
    PatternLayoutEncoder encoder = new PatternLayoutEncoder();
    encoder.setContext(context);
    encoder.setPattern("%d{HH:mm:ss.SSS} %-5level [%thread] %msg%n");
    encoder.start();
    FileAppender<ch.qos.logback.classic.spi.ILoggingEvent> appender = new FileAppender<>();
    appender.setContext(context);
    appender.setName("caches");
    appender.setFile(file.toString());
    appender.setAppend(false);
    appender.setEncoder(encoder);
    appender.start();
    Logger logger = context.getLogger(LOGGER);
    logger.setLevel(Level.INFO);
    logger.setAdditive(false);
    logger.addAppender(appender);
  }
}
