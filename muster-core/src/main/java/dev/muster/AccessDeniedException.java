package dev.muster;

/**
 * etcd refused the client: it could not authenticate ({@link ErrorCode#AUTHENTICATION_FAILED}) or its user may not
 * touch a key ({@link ErrorCode#PERMISSION_DENIED}). Retrying with the same credentials will not help, so Muster
 * does not: a registration fails to start, and an endpoint cache stops in its failed state. The message names the
 * user, the key or prefix and the permission needed.
 */
public class AccessDeniedException extends MusterException {
  public AccessDeniedException(ErrorCode code, String message, Throwable cause) {
    super(requireAccessCode(code), message, cause);
  }

  private static ErrorCode requireAccessCode(ErrorCode code) {
    if (code != ErrorCode.AUTHENTICATION_FAILED && code != ErrorCode.PERMISSION_DENIED) {
      throw new IllegalArgumentException("not an access code: " + code);
    }
    return code;
  }
}
