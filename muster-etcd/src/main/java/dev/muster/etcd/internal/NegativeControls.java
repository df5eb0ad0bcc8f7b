package dev.muster.etcd.internal;

import dev.muster.cache.CacheConfig;
import dev.muster.cache.EndpointCache;
import dev.muster.cache.EndpointListener;
import dev.muster.etcd.EtcdRegistry;
import java.util.List;
import java.util.Objects;

/**
 * The lab's negative controls: Muster run wrong on purpose, to show that the lab's checks can fail. They are not
 * options of any production configuration, and this package is not exported; the lab, the chaos checker and the
 * command line's hidden lab flags reach them here.
 *
 * <p>{@link EtcdRegistry} installs its side of the hook when its class is initialized (as OkHttp's
 * {@code Internal.instance}), so a registry passed in has always installed it.
 */
public final class NegativeControls {
  /** What {@link EtcdRegistry} lets this class do with its private connection. */
  @FunctionalInterface
  public interface Access {
    EndpointCache watchFromNow(EtcdRegistry registry, CacheConfig config, List<EndpointListener> listeners);
  }

  private static volatile Access access;

  private NegativeControls() {}

  /** Called once, by {@link EtcdRegistry}'s static initializer. */
  public static void install(Access registryAccess) {
    access = Objects.requireNonNull(registryAccess, "registryAccess");
  }

  /**
   * A cache that, after a break, watches from "now" and never re-ranges (lab consumer C): it misses whatever
   * happened meanwhile. Closed with the registry, like any cache.
   */
  public static EndpointCache watchFromNow(EtcdRegistry registry, CacheConfig config, EndpointListener... listeners) {
    Objects.requireNonNull(registry, "registry");
    return access.watchFromNow(registry, config, List.of(listeners));
  }
}
