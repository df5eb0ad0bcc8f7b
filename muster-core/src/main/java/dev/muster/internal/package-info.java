/** Helpers shared by Muster's own loops (reconnect backoff), not API. Exported only to {@code dev.muster.etcd}. */
package dev.muster.internal;
