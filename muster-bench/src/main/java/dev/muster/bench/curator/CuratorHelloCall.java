package dev.muster.bench.curator;

import dev.muster.bench.support.CallLoop;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.function.Supplier;
import org.apache.curator.x.discovery.ServiceInstance;
import org.apache.curator.x.discovery.ServiceProvider;

/**
 * One call as Curator's documentation has a caller make it: ask the {@code ServiceProvider} for an instance, make
 * one HTTP attempt ({@code GET /hello}, deadline {@code attemptTimeout}) and, if it fails, report the instance with
 * {@code noteError} so the {@code DownInstancePolicy} can leave it out. Curator has no retry, so there is none: a
 * failed attempt is a failed call. A {@code null} instance (nothing left to pick) is a failed call too. The shared
 * {@link CallLoop} makes these calls at the same rate as the Muster caller's.
 *
 * <p>Called on the loop's one thread; the {@code ServiceProvider} and the {@code HttpClient} are thread-safe.
 */
final class CuratorHelloCall implements Supplier<String> {
  private final ServiceProvider<String> provider;
  private final Duration attemptTimeout;
  private final HttpClient http;

  CuratorHelloCall(ServiceProvider<String> provider, Duration attemptTimeout) {
    this.provider = provider;
    this.attemptTimeout = attemptTimeout;
    // HTTP/1.1: the providers' server does not speak HTTP/2, and an h2c upgrade offer would only add bytes.
    this.http = HttpClient.newBuilder()
        .version(HttpClient.Version.HTTP_1_1)
        .connectTimeout(attemptTimeout)
        .build();
  }

  /** Null when the call succeeded, else why it failed. */
  @Override
  public String get() {
    ServiceInstance<String> instance = null;
    String failure;
    try {
      instance = provider.getInstance();
      if (instance == null) {
        failure = "no instance";
      } else {
        HttpRequest request = HttpRequest.newBuilder(
                URI.create("http://127.0.0.1:" + instance.getPort() + "/hello"))
            .timeout(attemptTimeout)
            .GET()
            .build();
        int status = http.send(request, HttpResponse.BodyHandlers.ofString()).statusCode();
        failure = status == 200 ? null : "HTTP " + status;
      }
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      return "interrupted";
    } catch (Exception e) {
      failure = e.getClass().getSimpleName();
    }
    if (failure != null && instance != null) {
      provider.noteError(instance);
    }
    return failure;
  }
}
