/**
 * Real etcd for tests, the lab and users' own tests: {@link dev.muster.testing.EtcdCluster} starts private
 * etcd processes on loopback ports and doubles as a JUnit 5 extension; {@link dev.muster.testing.FaultProxy}
 * sits between a client and etcd to cut, black-hole or delay its traffic. For other processes (a {@code muster}
 * command, a provider JVM): {@link dev.muster.testing.ChildProcess}, its JSON-lines output read by
 * {@link dev.muster.testing.JsonLog}, and {@link dev.muster.testing.LeaseRemainder}, the one rule that splits a stale
 * window into the lease remainder and detection + delivery.
 *
 * <p>Every process started here is tracked by pid and killed when its cluster closes, when a start fails
 * half-way, and on JVM shutdown. Nothing is ever killed by name.
 */
package dev.muster.testing;
