/**
 * The Curator/ZooKeeper side of Muster's side-by-side benchmark: {@link dev.muster.bench.curator.CuratorBench}
 * runs Curator's service discovery on a real ZooKeeper server ({@link dev.muster.bench.curator.ZooKeeperServer})
 * with provider processes ({@link dev.muster.bench.curator.CuratorProvider}); {@code ./muster bench --only curator}
 * runs it alone.
 */
package dev.muster.bench.curator;
