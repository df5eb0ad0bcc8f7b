package dev.muster;

import java.util.Objects;

/**
 * A value read from the registry cannot be decoded into an instance: it is not UTF-8 JSON, not an object, too
 * large, or a field has a bad value. The one-line message names the key and the problem, e.g.
 * {@code value of default/orders/v1/host-8080-a1b2c3 is malformed: field "port" has bad value "80": expected an
 * integer 1-65535}.
 *
 * <p>Consumers exclude such values from their set and count them; they never stop a cache. Code
 * {@link ErrorCode#INVALID_INPUT}.
 */
public class MalformedValueException extends MusterException {
  private final String key;
  private final String problem;

  public MalformedValueException(String key, String problem) {
    this(key, problem, null);
  }

  public MalformedValueException(String key, String problem, Throwable cause) {
    super(ErrorCode.INVALID_INPUT,
        "value of " + Objects.requireNonNull(key, "key") + " is malformed: " + Objects.requireNonNull(problem, "problem"),
        cause);
    this.key = key;
    this.problem = problem;
  }

  /** The key whose value is bad, as given by the decoder (without the root, e.g. {@code default/orders/v1/x}). */
  public String key() {
    return key;
  }

  /** What is wrong with the value, without the key. */
  public String problem() {
    return problem;
  }
}
