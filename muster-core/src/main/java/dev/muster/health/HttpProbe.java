package dev.muster.health;

import dev.muster.registry.Instance;
import java.net.URI;
import java.net.URISyntaxException;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.net.http.HttpTimeoutException;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.Executor;

/**
 * HTTP GET of the configured path on each endpoint (plain HTTP), with the JDK's {@link HttpClient} running on the
 * prober's pool. Passes when the status is in the expected range; redirects are not followed; the body is
 * discarded. Thread-safe.
 *
 * <p>Plain HTTP on purpose, also for a service called over {@code https}: a probe carries no credentials (no
 * {@code Authorization}, no cookie, only its {@code User-Agent}), so nothing secret can leak in clear, and the
 * caller's own calls keep their scheme (see {@code MusterHttp}). A provider that serves TLS only is probed with
 * {@code tcp} (its port accepts connections) or on a plain health port; an {@code https:} probe kind, with the
 * caller's trust store, is not built (docs/design-security2.md, item 2).
 */
final class HttpProbe implements Probe {
  private final ProbeConfig config;
  private final HttpClient http;

  HttpProbe(ProbeConfig config, Executor executor) {
    this.config = config;
    this.http = HttpClient.newBuilder().executor(executor).followRedirects(HttpClient.Redirect.NEVER)
        .connectTimeout(config.timeout()).build();
  }

  @Override
  public CompletableFuture<ProbeResult> check(Instance target, Duration timeout) {
    URI uri;
    try { // the multi-argument constructor brackets an IPv6 literal
      uri = URI.create(new URI("http", null, target.address(), target.port(), null, null, null) + config.path());
    } catch (URISyntaxException | IllegalArgumentException e) {
      return CompletableFuture.completedFuture(ProbeResult.fail("no probe URL for " + target.address() + ":"
          + target.port() + config.path() + ": " + e.getMessage()));
    }
    HttpRequest request = HttpRequest.newBuilder(uri).timeout(timeout).GET()
        .header("User-Agent", "muster-probe").build();
    return http.sendAsync(request, HttpResponse.BodyHandlers.discarding()).handle((r, e) -> {
      if (e != null) {
        return ProbeResult.fail(describe(e, timeout));
      }
      int s = r.statusCode();
      return s >= config.expectedStatusMin() && s <= config.expectedStatusMax()
          ? ProbeResult.pass(String.valueOf(s)) : ProbeResult.fail(String.valueOf(s));
    });
  }

  static String describe(Throwable e, Duration timeout) {
    Throwable c = e instanceof CompletionException && e.getCause() != null ? e.getCause() : e;
    if (c instanceof HttpTimeoutException) {
      return "timed out after " + timeout.toMillis() + " ms";
    }
    if (c instanceof java.net.ConnectException) {
      return "connection refused";
    }
    return c.getMessage() == null ? c.getClass().getSimpleName() : c.getMessage();
  }
}
