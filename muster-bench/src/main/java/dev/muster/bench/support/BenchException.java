package dev.muster.bench.support;

/** A measurement could not be made (set-up failed, a wait timed out); the message says what and why. */
public final class BenchException extends RuntimeException {
  public BenchException(String message) {
    super(message);
  }

  public BenchException(String message, Throwable cause) {
    super(message, cause);
  }
}
