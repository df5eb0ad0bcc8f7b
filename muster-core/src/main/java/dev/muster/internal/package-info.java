/**
 * Helpers shared by Muster's own code, not API: the threads every cache and registration runs on ({@link
 * dev.muster.internal.DeliveryPool}, {@link dev.muster.internal.SerialExecutor}, {@link
 * dev.muster.internal.ListenerExecutor}), reconnect backoff, the JSON mapper of registry values. Exported only to
 * {@code dev.muster.etcd}.
 */
package dev.muster.internal;
