package dev.muster;

/**
 * What kind of failure a {@link MusterException} reports. Callers branch on the code, never on the message text.
 * The code says nothing about processes: the command line maps codes to its own exit statuses (SPEC §7).
 *
 * <p>Immutable; safe to share between threads.
 */
public enum ErrorCode {
  /** A name, address, setting or stored value does not follow the rules; the message says which rule. */
  INVALID_INPUT,
  /** The instance key is already held by another provider's lease. */
  DUPLICATE_INSTANCE,
  /** etcd could not be reached (or had no leader) when it was needed. */
  REGISTRY_UNAVAILABLE,
  /**
   * etcd did not accept who the client says it is: a wrong password, an unknown user, no user where etcd requires
   * one, or a TLS certificate refused (by etcd, or etcd's by the client).
   */
  AUTHENTICATION_FAILED,
  /** etcd knows the user but its roles do not allow this key or prefix; the message names the permission needed. */
  PERMISSION_DENIED,
  /** A call found no endpoint of its service to try (none registered, or no set published yet). */
  NO_ENDPOINT,
  /** The provider's lease expired or was revoked behind its back. */
  LEASE_LOST,
  /** A bug or an unexpected state inside Muster. */
  INTERNAL
}
