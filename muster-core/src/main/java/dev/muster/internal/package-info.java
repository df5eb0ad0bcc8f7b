/**
 * Helpers shared by Muster's own code (reconnect backoff, the JSON mapper of registry values), not API. Exported
 * only to {@code dev.muster.etcd}.
 */
package dev.muster.internal;
