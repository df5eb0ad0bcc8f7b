package dev.muster;

import java.util.Objects;

/**
 * A value given to Muster (a name, an address, a flag, a key) breaks a rule. The message names the field, shows
 * the offending value and says what is allowed, for example:
 * {@code service "Orders_API" is invalid: use 1-63 characters of a-z, 0-9 and '-', starting and ending with a
 * letter or digit}.
 *
 * <p>Code {@link ErrorCode#INVALID_INPUT}.
 */
public class InvalidInputException extends MusterException {
  private final String field;
  private final String value;

  /**
   * @param field the name the user knows the input by ({@code service}, {@code port}, {@code --weight})
   * @param value the offending value, or {@code null} when it was missing; strings are quoted in the message
   * @param allowed what a valid value looks like, phrased as an instruction ("use 1-65535")
   */
  public InvalidInputException(String field, Object value, String allowed) {
    this(field, value, describe(field, value) + ": " + Objects.requireNonNull(allowed, "allowed"), null);
  }

  private InvalidInputException(String field, Object value, String message, Throwable cause) {
    super(ErrorCode.INVALID_INPUT, message, cause);
    this.field = Objects.requireNonNull(field, "field");
    this.value = value == null ? null : value.toString();
  }

  /**
   * For rules that do not fit "field value is invalid: allowed", such as a size limit: {@code message} is used as
   * given and must itself name the field and the value.
   */
  public static InvalidInputException withMessage(String field, Object value, String message) {
    return new InvalidInputException(field, value, message, null);
  }

  /** The input's name as the user knows it, e.g. {@code service} or {@code address}. */
  public String field() {
    return field;
  }

  /** The offending value as text; {@code null} when the value was missing. */
  public String value() {
    return value;
  }

  private static String describe(String field, Object value) {
    if (value == null) {
      return field + " is missing";
    }
    if (value instanceof CharSequence text) {
      return text.length() == 0 ? field + " is empty" : field + " " + Messages.quote(text.toString()) + " is invalid";
    }
    return field + " " + value + " is invalid";
  }
}
