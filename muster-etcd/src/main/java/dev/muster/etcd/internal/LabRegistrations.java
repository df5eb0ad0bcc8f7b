package dev.muster.etcd.internal;

import dev.muster.etcd.EtcdRegistry;
import dev.muster.registry.Instance;
import dev.muster.registry.RegistrarConfig;
import dev.muster.registry.Registration;
import dev.muster.registry.RegistrationListener;
import dev.muster.registry.internal.RegistrarControls;
import java.util.Objects;

/**
 * The internal entry point for registrations with the lab's negative controls ({@link RegistrarControls}): the
 * hidden options of {@code muster register}, the bench's provider and tests use it; production code registers
 * through {@link EtcdRegistry#register} and cannot reach the controls.
 *
 * <p>{@link EtcdRegistry} installs the bridge once, in its static initializer (the OkHttp {@code Internal}
 * pattern: the registry's connection stays private to it). Thread-safe.
 */
public final class LabRegistrations {
  /** What the registry provides: a registration with controls, held and closed by the registry. */
  @FunctionalInterface
  public interface Bridge {
    Registration register(EtcdRegistry registry, Instance instance, RegistrarConfig config,
        RegistrarControls controls, RegistrationListener listener);
  }

  private static volatile Bridge bridge;

  private LabRegistrations() {}

  /** Called by {@link EtcdRegistry} only. */
  public static void install(Bridge b) {
    bridge = Objects.requireNonNull(b, "bridge");
  }

  /** As {@link EtcdRegistry#register(Instance, RegistrarConfig, RegistrationListener)}, with {@code controls}. */
  public static Registration register(EtcdRegistry registry, Instance instance, RegistrarConfig config,
      RegistrarControls controls, RegistrationListener listener) {
    Objects.requireNonNull(registry, "registry"); // initialized EtcdRegistry, so the bridge is installed
    return bridge.register(registry, instance, config, controls, listener);
  }
}
