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
   * Starts an endpoint cache for {@code config.service()} and returns at once, before its first set; the caller
   * owns the returned cache and closes it. {@code listeners} are added before the first publication, so they
   * receive the first set.
   */
  EndpointCache watch(CacheConfig config, EndpointListener... listeners);
}
