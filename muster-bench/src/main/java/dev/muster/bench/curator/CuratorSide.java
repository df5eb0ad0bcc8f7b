package dev.muster.bench.curator;

import java.time.Duration;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.x.discovery.ServiceCache;
import org.apache.curator.x.discovery.ServiceDiscovery;
import org.apache.curator.x.discovery.ServiceInstance;
import org.apache.curator.x.discovery.details.ServiceCacheListener;

/**
 * One Curator client (one ZooKeeper session) with a started {@code ServiceDiscovery}, for the scale bench in
 * another package: register an instance, or watch a service with a started {@code ServiceCache}. Closing it closes
 * the caches and the client.
 *
 * <p>Not thread-safe: the bench's measuring thread only (cache listeners run on Curator's threads).
 */
public final class CuratorSide implements AutoCloseable {
  /** The session timeout of every Curator client of the scale bench: the private server's largest (10 s). */
  public static final Duration SESSION = Duration.ofSeconds(10);

  private final CuratorFramework client;
  private final ServiceDiscovery<String> discovery;

  private CuratorSide(CuratorFramework client) {
    this.client = client;
    try {
      this.discovery = Curators.discovery(client);
    } catch (RuntimeException e) {
      client.close();
      throw e;
    }
  }

  public static CuratorSide connect(String connect) {
    return new CuratorSide(Curators.connected(connect, SESSION));
  }

  /** Registers {@code id} of {@code service}; closing the handle unregisters it. */
  public AutoCloseable register(String service, String id, int port) {
    ServiceInstance<String> instance = Curators.instance(service, id, port);
    Curators.call("register " + id, () -> {
      discovery.registerService(instance);
      return null;
    });
    return () -> Curators.call("unregister " + id, () -> {
      discovery.unregisterService(instance);
      return null;
    });
  }

  /** A started cache of {@code service}; {@code onChange} gets its instance count after every change. */
  public ServiceCache<String> watch(String service, java.util.function.IntConsumer onChange) {
    ServiceCache<String> cache = discovery.serviceCacheBuilder().name(service).build();
    cache.addListener(new ServiceCacheListener() {
      @Override
      public void cacheChanged() {
        onChange.accept(cache.getInstances().size());
      }

      @Override
      public void stateChanged(CuratorFramework c, org.apache.curator.framework.state.ConnectionState s) {
        // counts only
      }
    });
    Curators.call("start ServiceCache of " + service, () -> {
      cache.start();
      return null;
    });
    return cache;
  }

  @Override
  public void close() {
    Curators.closeQuietly(discovery);
    client.close();
  }
}
