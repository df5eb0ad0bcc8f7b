/**
 * The registration's machinery, not API: the sans-I/O state machine ({@link
 * dev.muster.registry.internal.RegistrarDriver}), the runtime that runs it ({@link
 * dev.muster.registry.internal.LiveRegistration}: loop, timers, shutdown hook) and the lab's negative controls
 * ({@link dev.muster.registry.internal.RegistrarControls}). Exported only to {@code dev.muster.etcd}, which gives
 * each registration its I/O; applications use {@link dev.muster.registry.Registration}.
 */
package dev.muster.registry.internal;
