package dev.muster.outlier;

/**
 * What one attempt against one endpoint proved about that endpoint, in Envoy's outlier-detection terms. A transport
 * maps its own results onto these three; the mapping is the transport's only say in ejection.
 */
public enum Outcome {
  /** A response below 500: the endpoint is reachable and answering. Resets both consecutive-failure counters. */
  SUCCESS,
  /**
   * The failure happened before the endpoint could answer: connection refused or reset, TLS failure, or the attempt
   * timed out (the engine's own attempt deadline counts here too). Counts toward
   * {@link OutlierConfig#consecutiveLocalOriginFailure()}.
   */
  LOCAL_ORIGIN_FAILURE,
  /**
   * The endpoint answered with status 500 or more. Counts toward {@link OutlierConfig#consecutive5xx()}; it proves
   * the connection works, so it resets the local-origin counter.
   */
  HTTP_5XX;

  /** True for the two failure kinds. */
  public boolean isFailure() {
    return this != SUCCESS;
  }
}
