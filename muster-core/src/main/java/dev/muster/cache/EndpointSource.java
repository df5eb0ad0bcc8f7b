package dev.muster.cache;

/**
 * Something that opens {@link EndpointCache}s: the registry a consumer watches (muster-etcd's {@code EtcdRegistry},
 * a test double, later a DNS or static source). It lets the calling layer ({@code dev.muster.client.MusterClient},
 * {@code dev.muster.http.MusterHttp}) open caches without depending on a registry implementation.
 *
 * <p>Implementations must be thread-safe: {@link #watch} may be called from any thread.
 */
public interface EndpointSource {
  /**
   * Starts an endpoint cache of its own for {@code config.service()} and returns at once, before its first set; the
   * caller owns the returned cache and closes it. For the process's shared cache of a service, {@link #open}. {@code listeners} are added before the first publication, so they
   * receive the first set.
   */
  EndpointCache watch(CacheConfig config, EndpointListener... listeners);

  /**
   * A hold on the process's one cache of {@code config}: the first {@code open} of a config starts its cache (as
   * {@link #watch} would), later ones with an equal config share it, and the cache is closed when the last hold is.
   * Closing the returned cache releases this hold and removes the listeners added through it; its reads go on
   * answering from the shared cache. {@code listeners} receive the current set first (a SNAPSHOT), then every
   * change, as {@link EndpointCache#addListener} says. What the adapters (gRPC, Spring, DNS, the console,
   * {@code MusterClient}) use, so a service asked for by several of them is watched once.
   *
   * <p>The default opens a cache of its own ({@link #watch}): for sources that do not share.
   */
  default EndpointCache open(CacheConfig config, EndpointListener... listeners) {
    return watch(config, listeners);
  }
}
