package dev.muster.cache.internal;

import dev.muster.ErrorCode;
import dev.muster.MusterException;

/**
 * A revision's events cannot be trusted (a key outside the watched prefix, a record whose revision is not the
 * revision being applied): nothing of that revision was applied. The cache answers with a full resync.
 */
public final class InvalidEventException extends MusterException {
  private static final long serialVersionUID = 1L;

  public InvalidEventException(String message) {
    super(ErrorCode.INTERNAL, message);
  }
}
