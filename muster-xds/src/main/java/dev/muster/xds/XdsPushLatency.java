package dev.muster.xds;

import java.time.Duration;

/**
 * How long changes took to reach the clients, as {@link XdsServer#pushLatency()} reports them: from the moment the
 * server's cache of a service heard a change to the moment a client acknowledged (ACK) the assignment carrying it,
 * one sample per stream and change, over the last {@code samples} of them (at most 65,536).
 *
 * @param samples how many acknowledgements the percentiles are over (0: none yet, and the durations are zero)
 * @param p50 the median
 * @param p99 the 99th percentile
 * @param max the longest
 */
public record XdsPushLatency(int samples, Duration p50, Duration p99, Duration max) {}
