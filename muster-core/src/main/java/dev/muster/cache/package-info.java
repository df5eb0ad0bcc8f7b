/**
 * The consumer's API without etcd: an {@link dev.muster.cache.EndpointCache} whose
 * {@link dev.muster.cache.EndpointSet} is always "a snapshot at revision R plus every later event, in revision
 * order" (SPEC §4), its {@link dev.muster.cache.CacheConfig}, and the {@link dev.muster.cache.EndpointListener}s
 * that receive each set with its {@link dev.muster.cache.EndpointDelta}.
 *
 * <p>The machinery (the state machine that decides when to range, watch from the checkpoint, resync and back off;
 * the revision applier) is in {@code dev.muster.cache.internal}, which is not exported to applications.
 */
package dev.muster.cache;
