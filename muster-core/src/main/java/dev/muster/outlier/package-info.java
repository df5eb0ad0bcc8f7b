/**
 * Passive (local) ejection of failing endpoints, named after Envoy's outlier detection (SPEC §5): an
 * {@link dev.muster.outlier.OutlierDetector} per service reads each attempt's {@link dev.muster.outlier.Outcome} and
 * ejects an endpoint after {@code consecutiveLocalOriginFailure} local-origin failures or {@code consecutive5xx} 5xx
 * responses in a row, for {@code baseEjectionTime × times ejected} up to {@code maxEjectionTime}, never more than
 * {@code maxEjectionPercent} of the endpoints at once. Ejections stay in the process.
 */
package dev.muster.outlier;
