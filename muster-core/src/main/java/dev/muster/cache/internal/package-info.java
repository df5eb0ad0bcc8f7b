/**
 * The endpoint cache's machinery, not API: the sans-I/O state machine ({@link dev.muster.cache.internal.CacheDriver}),
 * the revision applier, listener delivery and the snapshot store. Exported only to {@code dev.muster.etcd}, whose
 * adapter drives them; applications use {@link dev.muster.cache.EndpointCache}.
 */
package dev.muster.cache.internal;
