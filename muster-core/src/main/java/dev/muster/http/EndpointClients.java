package dev.muster.http;

import dev.muster.registry.InstanceKey;
import java.lang.reflect.Method;
import java.net.http.HttpClient;
import java.time.Duration;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;
import javax.net.ssl.SSLContext;
import javax.net.ssl.SSLParameters;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * One keep-alive {@link HttpClient} per endpoint, so the connections of one endpoint can be let go of on their
 * own: when the cache removes an endpoint, its client takes no new requests and is closed once its in-flight
 * requests end.
 *
 * <p>Closing: {@code HttpClient.close()} exists from Java 21 and is called when present. On Java 17 there is no
 * close; the dropped client's idle connections are closed when the client is garbage-collected (its selector
 * thread ends then) or by the JDK's keep-alive timeout ({@code jdk.httpclient.keepalive.timeout}). Each client
 * has one selector thread, so this suits tens to hundreds of endpoints per service, not tens of thousands.
 *
 * <p>Each client makes {@code https} requests with the caller's {@link SSLContext} and {@link SSLParameters}
 * (null: the JDK's defaults); an {@code http} request is never upgraded nor an {@code https} one downgraded here:
 * the URI's scheme, which {@link MusterHttp} keeps from the caller's request, decides.
 *
 * <p>Thread-safe: a concurrent map of entries with atomic in-flight counters.
 */
final class EndpointClients {
  private static final Logger log = LoggerFactory.getLogger(EndpointClients.class);
  private static final Method CLOSE = closeMethod();

  private final Duration connectTimeout;
  private final SSLContext sslContext;
  private final SSLParameters sslParameters;
  private final Map<InstanceKey, Entry> clients = new ConcurrentHashMap<>();

  /** A client and the requests in flight on it. */
  static final class Entry {
    final HttpClient client;
    final AtomicInteger inFlight = new AtomicInteger();
    volatile boolean removed;

    Entry(HttpClient client) {
      this.client = client;
    }
  }

  EndpointClients(Duration connectTimeout, SSLContext sslContext, SSLParameters sslParameters) {
    this.connectTimeout = connectTimeout;
    this.sslContext = sslContext;
    this.sslParameters = sslParameters;
  }

  /** The endpoint's client, with one more request counted in flight; pair with {@link #done}. */
  Entry acquire(InstanceKey key) {
    Entry e = clients.computeIfAbsent(key, k -> new Entry(newClient()));
    e.inFlight.incrementAndGet();
    return e;
  }

  private HttpClient newClient() {
    HttpClient.Builder b = HttpClient.newBuilder()
        .version(HttpClient.Version.HTTP_1_1)
        .connectTimeout(connectTimeout)
        .followRedirects(HttpClient.Redirect.NEVER); // a redirect could lead an https call to an http URL
    if (sslContext != null) {
      b.sslContext(sslContext);
    }
    if (sslParameters != null) {
      b.sslParameters(sslParameters);
    }
    return b.build();
  }

  void done(InstanceKey key, Entry e) {
    if (e.inFlight.decrementAndGet() == 0 && e.removed) {
      release(key, e);
    }
  }

  /** The endpoint left the set: close its client now if idle, else when its last request ends. */
  void removed(InstanceKey key) {
    Entry e = clients.get(key);
    if (e == null) {
      return;
    }
    e.removed = true;
    if (e.inFlight.get() == 0) {
      release(key, e);
    }
  }

  int size() {
    return clients.size();
  }

  void closeAll() {
    clients.forEach(this::release);
  }

  private void release(InstanceKey key, Entry e) {
    if (clients.remove(key, e) && CLOSE != null) {
      try {
        CLOSE.invoke(e.client);
      } catch (ReflectiveOperationException ex) {
        log.debug("closing the HTTP client of {} failed: {}", key.path(), ex.toString());
      }
    }
  }

  private static Method closeMethod() {
    try {
      return HttpClient.class.getMethod("close"); // Java 21+
    } catch (NoSuchMethodException e) {
      return null;
    }
  }
}
