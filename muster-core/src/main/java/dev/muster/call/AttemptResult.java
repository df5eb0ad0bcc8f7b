package dev.muster.call;

import dev.muster.outlier.Outcome;
import java.util.Objects;

/**
 * How one attempt against one endpoint ended: a value, a failure, or both (a 5xx response is a failure that still has
 * a response), plus the {@link Outcome} the outlier detector records. Immutable.
 *
 * @param value the response; required for {@code SUCCESS}, optional for a failure (the 5xx response, if any)
 * @param failure why the attempt failed; null exactly when {@code outcome} is {@code SUCCESS}
 * @param outcome what the attempt proved about the endpoint
 */
public record AttemptResult<T>(T value, Throwable failure, Outcome outcome) {
  public AttemptResult {
    Objects.requireNonNull(outcome, "outcome");
    if (outcome == Outcome.SUCCESS && failure != null) {
      throw new IllegalArgumentException("outcome SUCCESS has failure " + failure + ": a success carries none");
    }
    if (outcome != Outcome.SUCCESS && failure == null) {
      throw new IllegalArgumentException("outcome " + outcome + " has no failure: give the cause");
    }
  }

  public static <T> AttemptResult<T> success(T value) {
    return new AttemptResult<>(value, null, Outcome.SUCCESS);
  }

  /** Connection refused or reset, TLS failure, the transport's own timeout: the endpoint did not answer. */
  public static <T> AttemptResult<T> localOriginFailure(Throwable cause) {
    return new AttemptResult<>(null, cause, Outcome.LOCAL_ORIGIN_FAILURE);
  }

  /** The endpoint answered with status 500 or more; {@code response} is kept for the caller. */
  public static <T> AttemptResult<T> serverError(T response, Throwable cause) {
    return new AttemptResult<>(response, cause, Outcome.HTTP_5XX);
  }

  public boolean ok() {
    return outcome == Outcome.SUCCESS;
  }
}
