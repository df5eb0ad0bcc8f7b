package dev.muster.http;

import dev.muster.InvalidInputException;
import dev.muster.balance.Balancer;
import dev.muster.cache.EndpointCache;
import dev.muster.call.Attempt;
import dev.muster.call.AttemptResult;
import dev.muster.call.CallMetrics;
import dev.muster.call.CallResult;
import dev.muster.call.Caller;
import dev.muster.call.Idempotent;
import dev.muster.call.MicrometerCallMetrics;
import dev.muster.outlier.OutlierDetector;
import dev.muster.registry.Instance;
import dev.muster.registry.Names;
import java.net.URI;
import java.net.URISyntaxException;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.util.Map;
import java.util.Objects;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.Function;

/**
 * HTTP calls to a service by name, through its endpoint cache: the balancer picks an address, a failing address is
 * ejected locally (never in etcd), and idempotent calls are retried once on a different address within the retry
 * budget (SPEC §5).
 *
 * <pre>{@code
 * MusterHttp http = new MusterHttp(service -> registry.watch(CacheConfig.builder(service).build()),
 *     HttpCallConfig.defaults());
 * CallResult<HttpResponse<String>> r = http.call("orders",
 *     HttpRequest.newBuilder(URI.create("http://orders/hello")).GET().build(), Idempotent.YES).join();
 * }</pre>
 *
 * <p>The request's scheme, host and port are replaced by the picked endpoint's address; its path, query, method,
 * headers and body are kept. A status of 500 or more counts toward {@code consecutive5xx} and is returned as the
 * call's value; a refused or reset connection or an attempt timeout counts as a local-origin failure.
 *
 * <p>Thread-safe and non-blocking: {@link #call} returns at once; the first call for a service starts its cache
 * (calls before the cache's first set fail with {@link dev.muster.call.NoEndpointException}, so wait with
 * {@link #awaitReady}). Result futures complete on HTTP client or deadline threads; do not block in callbacks.
 */
public final class MusterHttp implements AutoCloseable {
  private final Function<String, EndpointCache> caches;
  private final HttpCallConfig config;
  private final Map<String, ServiceCalls> services = new ConcurrentHashMap<>();

  /**
   * @param caches opens the endpoint cache of a service (called once per service, e.g.
   *     {@code service -> registry.watch(CacheConfig.builder(service).build())})
   */
  public MusterHttp(Function<String, EndpointCache> caches, HttpCallConfig config) {
    this.caches = Objects.requireNonNull(caches, "caches");
    this.config = Objects.requireNonNull(config, "config");
  }

  /** Calls {@code service} with {@code request} (its host is replaced by the picked endpoint's). */
  public CompletableFuture<CallResult<HttpResponse<String>>> call(String service, HttpRequest request,
      Idempotent idempotent) {
    Objects.requireNonNull(request, "request");
    Objects.requireNonNull(idempotent, "idempotent");
    ServiceCalls calls = services(service);
    return calls.caller.call((target, timeout) -> calls.attempt(request, target, timeout), idempotent);
  }

  /** {@code GET path} on {@code service}. */
  public CompletableFuture<CallResult<HttpResponse<String>>> get(String service, String path, Idempotent idempotent) {
    return call(service, HttpRequest.newBuilder(uriFor(service, path)).GET().build(), idempotent);
  }

  /** Starts the service's cache if needed and waits up to {@code timeout} for its first set. */
  public boolean awaitReady(String service, java.time.Duration timeout) {
    return services(service).cache.awaitReady(timeout);
  }

  /** The service's balancer (endpoints, ejection state), for diagnostics and tests. */
  public Balancer balancer(String service) {
    return services(service).balancer;
  }

  /** The service's call engine (retry budget counters). */
  public Caller caller(String service) {
    return services(service).caller;
  }

  @Override
  public void close() {
    services.values().forEach(s -> s.clients.closeAll());
    services.clear();
  }

  private ServiceCalls services(String service) {
    Names.requireValid("service", service);
    return services.computeIfAbsent(service, s -> new ServiceCalls(s, caches.apply(s)));
  }

  private static URI uriFor(String service, String path) {
    if (path == null || !path.startsWith("/")) {
      throw new InvalidInputException("path", path, "start it with '/', e.g. /hello");
    }
    try {
      return new URI("http://" + service + path);
    } catch (URISyntaxException e) {
      throw new InvalidInputException("path", path, "use a valid URL path and query");
    }
  }

  /** Everything one service needs: its cache, balancer, caller and per-endpoint HTTP clients. */
  private final class ServiceCalls {
    final EndpointCache cache;
    final Balancer balancer;
    final Caller caller;
    final EndpointClients clients;

    ServiceCalls(String service, EndpointCache cache) {
      this.cache = cache;
      this.clients = new EndpointClients(config.retry().attemptTimeout());
      OutlierDetector detector = new OutlierDetector(config.outlier(), System::nanoTime);
      this.balancer = Balancer.create(config.balancer(), detector, removed -> clients.removed(removed.key()));
      CallMetrics metrics = config.meters() == null ? CallMetrics.noop()
          : new MicrometerCallMetrics(config.meters(), service);
      this.caller = Caller.create(balancer, config.retry(), metrics);
      cache.addListener((set, delta) -> balancer.update(set)); // the current set arrives first, then each change
    }

    CompletableFuture<AttemptResult<HttpResponse<String>>> attempt(HttpRequest template, Instance target,
        java.time.Duration timeout) {
      URI uri;
      try {
        URI t = template.uri();
        uri = new URI("http", null, target.address(), target.port(), t.getRawPath() == null ? "/" : t.getPath(),
            t.getQuery(), null);
      } catch (URISyntaxException e) {
        return CompletableFuture.completedFuture(AttemptResult.localOriginFailure(e));
      }
      HttpRequest request = HttpRequest.newBuilder(template, (name, value) -> true).uri(uri).timeout(timeout).build();
      EndpointClients.Entry entry = clients.acquire(target.key());
      CompletableFuture<HttpResponse<String>> sent;
      try {
        sent = entry.client.sendAsync(request, HttpResponse.BodyHandlers.ofString());
      } catch (RuntimeException e) {
        clients.done(target.key(), entry);
        return CompletableFuture.completedFuture(AttemptResult.localOriginFailure(e));
      }
      return sent.handle((response, failure) -> {
        clients.done(target.key(), entry);
        if (failure != null) {
          return AttemptResult.<HttpResponse<String>>localOriginFailure(
              failure instanceof java.util.concurrent.CompletionException && failure.getCause() != null
                  ? failure.getCause() : failure);
        }
        if (response.statusCode() >= 500) {
          return AttemptResult.serverError(response, new IllegalStateException("HTTP " + response.statusCode()
              + " from " + target.id()));
        }
        return AttemptResult.success(response);
      });
    }
  }
}
