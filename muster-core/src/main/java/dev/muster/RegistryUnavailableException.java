package dev.muster;

/**
 * etcd could not be reached, or answered without a leader, when Muster needed it. The message should name the
 * endpoints and the operation; the cause is the transport error.
 *
 * <p>Code {@link ErrorCode#REGISTRY_UNAVAILABLE}.
 */
public class RegistryUnavailableException extends MusterException {
  public RegistryUnavailableException(String message, Throwable cause) {
    super(ErrorCode.REGISTRY_UNAVAILABLE, message, cause);
  }
}
