package dev.muster.call;

import dev.muster.outlier.Outcome;
import java.util.List;
import java.util.Objects;

/**
 * How a whole call ended, over all its attempts. Immutable.
 *
 * @param value the last attempt's value: the response when {@link #ok()}, the 5xx response (if the transport gave
 *     one) when not
 * @param failure null when the call succeeded; otherwise the last attempt's failure, or a
 *     {@link NoEndpointException} when there was no endpoint to try
 * @param outcome the last attempt's outcome; null when no attempt was made
 * @param endpointsTried the instance ids of the endpoints tried, in order, one per attempt
 * @param budgetRefused true when a retry was wanted, a different endpoint existed, and the retry budget refused it
 */
public record CallResult<T>(
    T value, Throwable failure, Outcome outcome, List<String> endpointsTried, boolean budgetRefused) {

  public CallResult {
    endpointsTried = List.copyOf(Objects.requireNonNull(endpointsTried, "endpointsTried"));
    if (failure == null && outcome != Outcome.SUCCESS) {
      throw new IllegalArgumentException("a call without failure has outcome " + outcome + ": use SUCCESS");
    }
    if (failure != null && outcome == Outcome.SUCCESS) {
      throw new IllegalArgumentException("a call with failure " + failure + " has outcome SUCCESS");
    }
    if ((outcome == null) != endpointsTried.isEmpty()) {
      throw new IllegalArgumentException("outcome " + outcome + " with " + endpointsTried.size()
          + " endpoint(s) tried: a call has an outcome exactly when it made an attempt");
    }
  }

  /** True when the last attempt succeeded. */
  public boolean ok() {
    return failure == null;
  }

  /** Attempts made (0 when there was no endpoint). */
  public int attempts() {
    return endpointsTried.size();
  }

  /** True when more than one attempt was made. */
  public boolean retried() {
    return endpointsTried.size() > 1;
  }
}
