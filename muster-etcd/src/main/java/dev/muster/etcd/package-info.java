/**
 * Muster on etcd: {@link dev.muster.etcd.EtcdRegistry} connects with the official jetcd client and registers
 * providers ({@link dev.muster.registry.Registration}). Implementation classes live in {@code internal}; the
 * public API never exposes jetcd or gRPC types.
 */
package dev.muster.etcd;
