package dev.muster;

/**
 * What kind of failure a {@link MusterException} reports, and the process exit code the command line maps it to
 * (SPEC §7: 0 ok, 2 bad usage or input, 3 duplicate instance id, 4 registry unreachable at start, 1 anything else).
 *
 * <p>Immutable; safe to share between threads.
 */
public enum ErrorCode {
  /** A name, address, flag or stored value does not follow the rules; the message says which rule. */
  INVALID_INPUT(2),
  /** The instance key is already held by another provider's lease. */
  DUPLICATE_INSTANCE(3),
  /** etcd could not be reached (or had no leader) when it was needed. */
  REGISTRY_UNAVAILABLE(4),
  /** A call found no endpoint of its service to try (none registered, or no set published yet). */
  NO_ENDPOINT(1),
  /** The provider's lease expired or was revoked behind its back. */
  LEASE_LOST(1),
  /** A bug or an unexpected state inside Muster. */
  INTERNAL(1);

  private final int exitCode;

  ErrorCode(int exitCode) {
    this.exitCode = exitCode;
  }

  /** The exit status a command-line process uses when it ends because of this error. */
  public int exitCode() {
    return exitCode;
  }
}
