package dev.muster.http;

import dev.muster.InvalidInputException;
import dev.muster.balance.Balancer;
import dev.muster.cache.CacheConfig;
import dev.muster.cache.EndpointCache;
import dev.muster.cache.EndpointSource;
import dev.muster.call.AttemptResult;
import dev.muster.call.CallResult;
import dev.muster.call.Idempotent;
import dev.muster.client.MusterClient;
import dev.muster.registry.Instance;
import dev.muster.registry.Names;
import dev.muster.retry.RetryBudget;
import java.net.URI;
import java.net.URISyntaxException;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Objects;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.Function;

/*
 * One MusterClient per service, opened on the service's first use. Opening is I/O (the cache starts a range and a
 * watch), so it never runs inside the map's computeIfAbsent, whose bin lock would stall other services' first calls:
 * the first caller puts an incomplete future with putIfAbsent (no I/O under the bin lock), opens the service
 * outside any lock, and completes the future; a concurrent first call for the same service chains onto that future
 * (call) or waits for it (the diagnostic getters). MusterHttp owns what it opens: close() closes every service's
 * client, cache and HTTP clients, including one still being opened (its opener closes it).
 */
/**
 * HTTP calls to a service by name, through its endpoint cache: the balancer picks an address, a failing address is
 * ejected locally (never in etcd), and idempotent calls are retried once on a different address within the retry
 * budget (SPEC §5). A thin layer over one {@link MusterClient} per service.
 *
 * <pre>{@code
 * MusterHttp http = MusterHttp.builder(registry).build(); // registry: an EndpointSource; .config(...) to tune
 * CallResult<HttpResponse<String>> r = http.call("orders",
 *     HttpRequest.newBuilder(URI.create("http://orders/hello")).GET().build(), Idempotent.YES).join();
 * }</pre>
 *
 * <p>The request's host and port are replaced by the picked endpoint's address; its scheme ({@code http} or
 * {@code https}, never changed: an {@code https} call is never sent in clear), raw (still encoded) path and query,
 * method, headers and body are kept. An {@code https} call checks the provider's certificate with
 * {@link HttpCallConfig#sslContext()} (default: the JVM's trusted CAs) against the endpoint's registered address. A status of 500 or more counts toward {@code consecutive5xx} and is
 * returned as the call's value; a refused or reset connection or an attempt timeout counts as a local-origin
 * failure.
 *
 * <p>Thread-safe and non-blocking: {@link #call} returns at once; the first call for a service opens its cache, and
 * calls made before the cache's first set wait for it up to {@link HttpCallConfig#firstSetTimeout()}, then fail
 * with {@link dev.muster.call.NoEndpointException}. Result futures complete on HTTP client, deadline or cache
 * notifier threads; do not block in callbacks. {@link #close()} closes every cache this instance opened.
 */
public final class MusterHttp implements AutoCloseable {
  private final Function<String, EndpointCache> caches;
  private final HttpCallConfig config;
  private final Map<String, CompletableFuture<ServiceCalls>> services = new ConcurrentHashMap<>();
  private final AtomicBoolean closed = new AtomicBoolean();

  private MusterHttp(Function<String, EndpointCache> caches, HttpCallConfig config) {
    this.caches = Objects.requireNonNull(caches, "caches");
    this.config = Objects.requireNonNull(config, "config");
  }

  /**
   * Calls through {@code source}: each service's cache is its shared one ({@link EndpointSource#open}) with
   * {@code CacheConfig.builder(service)}'s defaults.
   */
  public static Builder builder(EndpointSource source) {
    Objects.requireNonNull(source, "source");
    return new Builder(service -> source.open(CacheConfig.builder(service).build()));
  }

  /**
   * Calls through the caches {@code caches} opens (called once per service, e.g. {@code service ->
   * registry.open(CacheConfig.builder(service).trustedKeys(keys).build())}); MusterHttp closes what it returns.
   */
  public static Builder builder(Function<String, EndpointCache> caches) {
    return new Builder(Objects.requireNonNull(caches, "caches"));
  }

  /** Builds a {@link MusterHttp}: the caches it calls through, and how it calls ({@link HttpCallConfig}). */
  public static final class Builder {
    private final Function<String, EndpointCache> caches;
    private HttpCallConfig config = HttpCallConfig.defaults();

    private Builder(Function<String, EndpointCache> caches) {
      this.caches = caches;
    }

    /** How every call is made: balancer, ejection, retries, probes, timeouts (default {@link HttpCallConfig#defaults()}). */
    public Builder config(HttpCallConfig config) {
      this.config = Objects.requireNonNull(config, "config");
      return this;
    }

    public MusterHttp build() {
      return new MusterHttp(caches, config);
    }
  }

  /**
   * Calls {@code service} with {@code request} (its host is replaced by the picked endpoint's, its scheme kept).
   * Throws {@link InvalidInputException} for a scheme other than {@code http} or {@code https} (before any attempt)
   * and {@link IllegalStateException} once this MusterHttp is closed.
   */
  public CompletableFuture<CallResult<HttpResponse<String>>> call(String service, HttpRequest request,
      Idempotent idempotent) {
    Objects.requireNonNull(request, "request");
    Objects.requireNonNull(idempotent, "idempotent");
    requireHttpScheme(request.uri());
    CompletableFuture<ServiceCalls> opening = opened(service);
    if (opening.isDone() && !opening.isCompletedExceptionally()) {
      return opening.join().call(request, idempotent); // the usual case: cancelling the result stops retries
    }
    return opening.thenCompose(calls -> calls.call(request, idempotent));
  }

  /**
   * {@code GET path} on {@code service} over plain {@code http}; {@code path} may carry a query and is sent as given
   * (still encoded). For {@code https}, {@link #call} with an {@code https://service/path} request.
   */
  public CompletableFuture<CallResult<HttpResponse<String>>> get(String service, String path, Idempotent idempotent) {
    return call(service, HttpRequest.newBuilder(uriFor(service, path)).GET().build(), idempotent);
  }

  /** Opens the service if needed and waits up to {@code timeout} for its first set; false on timeout. */
  public boolean awaitReady(String service, Duration timeout) {
    return client(service).awaitReady(timeout);
  }

  /** The service's client (opening it if needed): its cache, balancer and budget, for diagnostics and tests. */
  public MusterClient client(String service) {
    try {
      return opened(service).join().client;
    } catch (CompletionException e) {
      throw e.getCause() instanceof RuntimeException r ? r : e;
    }
  }

  /** The service's balancer (endpoints, ejection state), for diagnostics and tests. */
  public Balancer balancer(String service) {
    return client(service).balancer();
  }

  /** The service's retry budget counters (requests, retries, refusals). */
  public RetryBudget budget(String service) {
    return client(service).budget();
  }

  /** Closes every service's client, endpoint cache and HTTP clients; later calls throw. Idempotent. */
  @Override
  public void close() {
    if (!closed.compareAndSet(false, true)) {
      return;
    }
    for (CompletableFuture<ServiceCalls> f : List.copyOf(services.values())) {
      if (f.isDone() && !f.isCompletedExceptionally()) { // one still opening is closed by its opener
        f.join().close();
      }
    }
  }

  /** The service's calls, opened by this thread if it is the first to ask. Never opens under a lock. */
  private CompletableFuture<ServiceCalls> opened(String service) {
    Names.requireValid("service", service);
    requireOpen();
    CompletableFuture<ServiceCalls> f = services.get(service);
    if (f != null) {
      return f;
    }
    CompletableFuture<ServiceCalls> mine = new CompletableFuture<>();
    f = services.putIfAbsent(service, mine);
    if (f != null) {
      return f;
    }
    ServiceCalls calls;
    try {
      calls = open(service);
    } catch (RuntimeException | Error e) {
      services.remove(service, mine); // a later call tries again
      mine.completeExceptionally(e);
      throw e;
    }
    mine.complete(calls);
    if (closed.get()) {
      calls.close();
    }
    return mine;
  }

  private ServiceCalls open(String service) {
    EndpointCache cache = Objects.requireNonNull(caches.apply(service), "the cache function returned null");
    try {
      return new ServiceCalls(service, cache);
    } catch (RuntimeException | Error e) {
      cache.close();
      throw e;
    }
  }

  private void requireOpen() {
    if (closed.get()) {
      throw new IllegalStateException("this MusterHttp is closed: make a new one");
    }
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

  /** Refuses, in one line, a request whose scheme is neither http nor https: there is no safe way to send it. */
  private static void requireHttpScheme(URI uri) {
    String scheme = uri.getScheme();
    if (!"http".equalsIgnoreCase(scheme) && !"https".equalsIgnoreCase(scheme)) {
      throw new InvalidInputException("request URI scheme", scheme == null ? "" : scheme,
          "write the request as http://SERVICE/PATH or https://SERVICE/PATH (https for TLS)");
    }
  }

  /**
   * {@code target}'s address with {@code template}'s scheme and raw path and query, unchanged: an {@code https}
   * call stays {@code https} (never sent in clear), and decoding and re-encoding the path and query would turn
   * {@code %2F} into a path separator and {@code %26} into a query separator.
   */
  static URI targetUri(URI template, Instance target) throws URISyntaxException {
    requireHttpScheme(template);
    String scheme = template.getScheme().toLowerCase(Locale.ROOT);
    String rawPath = template.getRawPath() == null || template.getRawPath().isEmpty() ? "/" : template.getRawPath();
    String rawQuery = template.getRawQuery();
    URI base = new URI(scheme, null, target.address(), target.port(), null, null, null); // brackets an IPv6 literal
    return new URI(base + rawPath + (rawQuery == null ? "" : "?" + rawQuery));
  }

  /** One service: its client (cache, balancer, caller), the cache to close, and per-endpoint HTTP clients. */
  private final class ServiceCalls {
    final EndpointCache cache;
    final EndpointClients clients;
    final MusterClient client;

    ServiceCalls(String service, EndpointCache cache) {
      this.cache = cache;
      this.clients = new EndpointClients(config.retry().attemptTimeout(), config.sslContext(),
          config.sslParameters());
      MusterClient.Builder builder = MusterClient.builder(cache).service(service);
      if (config.probe() != null) {
        if (config.probeFactory() != null) {
          builder.probe(config.probe(), config.probeFactory().get());
        } else {
          builder.probe(config.probe());
        }
      }
      this.client = builder
          .balancer(config.balancer()).outlier(config.outlier()).retry(config.retry()).meters(config.meters())
          .firstSetTimeout(config.firstSetTimeout())
          .onRemoved(removed -> clients.removed(removed.key()))
          .healthEvents(config.healthEvents())
          .build();
    }

    CompletableFuture<CallResult<HttpResponse<String>>> call(HttpRequest request, Idempotent idempotent) {
      return client.call((target, timeout) -> attempt(request, target, timeout), idempotent);
    }

    void close() {
      client.close();
      cache.close();
      clients.closeAll();
    }

    CompletableFuture<AttemptResult<HttpResponse<String>>> attempt(HttpRequest template, Instance target,
        Duration timeout) {
      URI uri;
      try {
        uri = targetUri(template.uri(), target);
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
              failure instanceof CompletionException && failure.getCause() != null ? failure.getCause() : failure);
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
