package dev.muster;

import java.util.Objects;

/**
 * The root of Muster's error model: an unchecked exception with an {@link ErrorCode}. Callers branch on
 * {@link #code()} (or on the subclass), never on the message text.
 *
 * <p>The message is always a single line that says what was wrong and, where there is something to do, what to
 * do, in the terms of the library's own API and configuration (a command line adds its own flags and exit codes):
 * line breaks in the text given to the constructor are folded into spaces so that it prints as one line.
 */
public class MusterException extends RuntimeException {
  private final ErrorCode code;

  public MusterException(ErrorCode code, String message) {
    this(code, message, null);
  }

  public MusterException(ErrorCode code, String message, Throwable cause) {
    super(Messages.oneLine(Objects.requireNonNull(message, "message")), cause);
    this.code = Objects.requireNonNull(code, "code");
  }

  /** What kind of failure this is. */
  public final ErrorCode code() {
    return code;
  }
}
