package dev.muster.etcd.internal;

import dev.muster.cache.CacheConfig;
import dev.muster.cache.EndpointCache;
import dev.muster.cache.EndpointListener;
import dev.muster.etcd.EtcdRegistry;
import dev.muster.registry.Instance;
import dev.muster.registry.RegistrarConfig;
import dev.muster.registry.Registration;
import dev.muster.registry.RegistrationListener;
import dev.muster.registry.internal.RegistrarControls;
import java.util.List;
import java.util.Objects;
import java.util.random.RandomGenerator;

/**
 * The lab's negative controls: Muster run wrong on purpose, to show that the lab's checks can fail — a cache that
 * resumes "from now" (consumer C), a cache without reconnect jitter (the scale bench's storm control), a cache
 * that drops one revision silently (the audit's control), and a
 * provider that does not re-register or that logs every keepalive ({@link RegistrarControls}). They are options of
 * no production configuration, and this package is not exported; the lab, the chaos checker, the bench and the
 * command line's hidden lab flags reach them here.
 *
 * <p>{@link EtcdRegistry} installs its side of the bridge when its class is initialized (OkHttp's
 * {@code Internal.instance} pattern: the registry's connection stays private to it), so a registry passed in has
 * always installed it. Thread-safe.
 */
public final class NegativeControls {
  /** What {@link EtcdRegistry} lets this class do with its private connection. */
  public interface Bridge {
    EndpointCache watchFromNow(EtcdRegistry registry, CacheConfig config, List<EndpointListener> listeners);

    EndpointCache watchWithoutJitter(EtcdRegistry registry, CacheConfig config, List<EndpointListener> listeners);

    EndpointCache watchDroppingRevision(EtcdRegistry registry, CacheConfig config, long revisionNumber,
        List<EndpointListener> listeners);

    Registration register(EtcdRegistry registry, Instance instance, RegistrarConfig config,
        RegistrarControls controls, RegistrationListener listener);
  }

  /**
   * Jitter off: every draw is the top of its window, so a reconnect waits exactly its backoff ceiling and a retry
   * after a successful probe exactly the probe jitter. Caches that failed together retry together: the
   * synchronised storm that full jitter exists to prevent, as the scale bench's control.
   */
  public static final RandomGenerator NO_JITTER = new RandomGenerator() {
    @Override
    public long nextLong() {
      return Long.MAX_VALUE;
    }

    @Override
    public long nextLong(long bound) {
      return bound - 1;
    }
  };

  private static volatile Bridge bridge;

  private NegativeControls() {}

  /** Called once, by {@link EtcdRegistry}'s static initializer. */
  public static void install(Bridge registryBridge) {
    bridge = Objects.requireNonNull(registryBridge, "registryBridge");
  }

  /**
   * A cache that, after a break, watches from "now" and never re-ranges (lab consumer C): it misses whatever
   * happened meanwhile. Held and closed by the registry, like any cache.
   */
  public static EndpointCache watchFromNow(EtcdRegistry registry, CacheConfig config, EndpointListener... listeners) {
    Objects.requireNonNull(registry, "registry");
    return bridge.watchFromNow(registry, config, List.of(listeners));
  }

  /**
   * A cache whose reconnect backoff has no jitter ({@link #NO_JITTER}): the control of the scale bench's reconnect
   * storm. Otherwise an ordinary cache, held and closed by the registry.
   */
  public static EndpointCache watchWithoutJitter(EtcdRegistry registry, CacheConfig config,
      EndpointListener... listeners) {
    Objects.requireNonNull(registry, "registry");
    return bridge.watchWithoutJitter(registry, config, List.of(listeners));
  }

  /**
   * A cache that silently drops the {@code revisionNumber}-th revision its watches deliver (counted from 1), before
   * applying it, as etcd 17529 drops events: the audit's negative control. With {@link CacheConfig#auditInterval}
   * on, its audit must find and repair the loss; with it off, the cache stays wrong. Otherwise an ordinary cache,
   * held and closed by the registry.
   */
  public static EndpointCache watchDroppingRevision(EtcdRegistry registry, CacheConfig config, long revisionNumber,
      EndpointListener... listeners) {
    Objects.requireNonNull(registry, "registry");
    if (revisionNumber < 1) {
      throw new IllegalArgumentException("revisionNumber " + revisionNumber + ": give 1 or more (the first revision"
          + " the cache's watches deliver is 1)");
    }
    return bridge.watchDroppingRevision(registry, config, revisionNumber, List.of(listeners));
  }

  /** As {@link EtcdRegistry#register(Instance, RegistrarConfig, RegistrationListener)}, with {@code controls}. */
  public static Registration register(EtcdRegistry registry, Instance instance, RegistrarConfig config,
      RegistrarControls controls, RegistrationListener listener) {
    Objects.requireNonNull(registry, "registry");
    return bridge.register(registry, instance, config, controls, listener);
  }
}
