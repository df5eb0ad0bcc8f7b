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
  /** A call found no endpoint of its service to try (none registered, or no set published yet). */
  NO_ENDPOINT,
  /** The provider's lease expired or was revoked behind its back. */
  LEASE_LOST,
  /** A bug or an unexpected state inside Muster. */
  INTERNAL
}
