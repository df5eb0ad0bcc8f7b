package dev.muster.call;

import dev.muster.ErrorCode;
import dev.muster.MusterException;

/**
 * A call found no endpoint to try: the balancer's set was empty (no provider registered, or the cache has not
 * published its first set yet). Reported as the {@link CallResult#failure()} of a call with no attempt.

 */
public final class NoEndpointException extends MusterException {
  public NoEndpointException(String message) {
    super(ErrorCode.NO_ENDPOINT, message);
  }
}
