/**
 * The endpoint cache's machinery, not API: the sans-I/O state machine ({@link dev.muster.cache.internal.CacheDriver}),
 * the revision applier, listener delivery, the snapshot store, and the runtime that runs them ({@link
 * dev.muster.cache.internal.LiveCache}: loop, timers, notifier). Exported only to {@code dev.muster.etcd}, which
 * gives each cache its I/O; applications use {@link dev.muster.cache.EndpointCache}.
 */
package dev.muster.cache.internal;
