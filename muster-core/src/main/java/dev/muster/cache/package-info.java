/**
 * The consumer side without etcd: an endpoint set that is always "a snapshot at revision R plus every later
 * event, in revision order" (SPEC §4).
 *
 * <ul>
 *   <li>{@link dev.muster.cache.internal.RevisionApplier}: the pure apply logic — snapshots replace, revisions apply
 *       atomically, old revisions are ignored, malformed values are excluded and counted.
 *   <li>{@link dev.muster.cache.internal.CacheDriver}: the state machine (Syncing, Watching, Broken) that decides when to
 *       range, watch from the checkpoint {@code last} (etcd 18089), resync, back off and report staleness, with its I/O behind
 *       {@link dev.muster.cache.internal.CacheDriver.Io} so it runs the same against etcd and against scripted streams.
 *   <li>{@link dev.muster.cache.EndpointCache}: what an application holds.
 * </ul>
 */
package dev.muster.cache;
