package dev.muster.bench.curator;

import dev.muster.bench.support.BenchException;
import java.time.Duration;
import java.util.concurrent.Callable;
import java.util.concurrent.TimeUnit;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.CuratorFrameworkFactory;
import org.apache.curator.retry.ExponentialBackoffRetry;
import org.apache.curator.x.discovery.ServiceDiscovery;
import org.apache.curator.x.discovery.ServiceDiscoveryBuilder;
import org.apache.curator.x.discovery.ServiceInstance;
import org.apache.curator.x.discovery.ServiceType;
import org.apache.curator.x.discovery.details.JsonInstanceSerializer;

/**
 * How every Curator client in the bench (providers, consumers, callers, the bulk writer) is built, so all of them
 * use the same session timeout, base path and serializer, plus {@link #call} to turn Curator's {@code throws
 * Exception} into one-line {@link BenchException}s. Stateless; thread-safe.
 *
 * <p>The payload type is {@code String} and every payload is {@code null}: Curator's own default, the smallest
 * znode a {@code ServiceDiscovery} writes. (Muster's registry value also carries zone, region, tags and metadata,
 * so Curator's bytes per instance are, if anything, flattered.)
 */
final class Curators {
  static final String BASE_PATH = "/muster-bench";

  /** How long a client may take to connect before Curator gives up on an operation; long for two busy cores. */
  private static final int CONNECTION_TIMEOUT_MS = 5_000;

  private static final Duration CONNECT_LIMIT = Duration.ofSeconds(20);

  private Curators() {}

  static JsonInstanceSerializer<String> serializer() {
    return new JsonInstanceSerializer<>(String.class);
  }

  /** A started client; not yet necessarily connected (see {@link #awaitConnected}). */
  static CuratorFramework client(String connect, Duration sessionTimeout) {
    CuratorFramework client = CuratorFrameworkFactory.builder()
        .connectString(connect)
        .sessionTimeoutMs(Math.toIntExact(sessionTimeout.toMillis()))
        .connectionTimeoutMs(CONNECTION_TIMEOUT_MS)
        .retryPolicy(new ExponentialBackoffRetry(100, 5))
        .build();
    client.start();
    return client;
  }

  static void awaitConnected(CuratorFramework client) {
    boolean connected = call("connect to ZooKeeper",
        () -> client.blockUntilConnected(Math.toIntExact(CONNECT_LIMIT.toSeconds()), TimeUnit.SECONDS));
    if (!connected) {
      throw new BenchException("no ZooKeeper connection after " + CONNECT_LIMIT.toSeconds() + " s");
    }
  }

  /** A client that is connected when this returns. */
  static CuratorFramework connected(String connect, Duration sessionTimeout) {
    CuratorFramework client = client(connect, sessionTimeout);
    try {
      awaitConnected(client);
      return client;
    } catch (RuntimeException e) {
      client.close();
      throw e;
    }
  }

  /** A started {@code ServiceDiscovery} on {@code client} under {@link #BASE_PATH}. */
  static ServiceDiscovery<String> discovery(CuratorFramework client) {
    ServiceDiscovery<String> discovery = ServiceDiscoveryBuilder.builder(String.class)
        .client(client)
        .basePath(BASE_PATH)
        .serializer(serializer())
        .build();
    call("start ServiceDiscovery", () -> {
      discovery.start();
      return null;
    });
    return discovery;
  }

  /**
   * An instance as {@code registerService} would write it. The public constructor rather than {@code
   * ServiceInstance.builder()}, which looks up every local IP address (slow, and the address is fixed anyway).
   */
  static ServiceInstance<String> instance(String service, String id, int port) {
    return new ServiceInstance<>(service, id, "127.0.0.1", port, null, null, System.currentTimeMillis(),
        ServiceType.DYNAMIC, null);
  }

  /** Runs {@code action}; any exception becomes a {@link BenchException} saying what was being done. */
  static <T> T call(String what, Callable<T> action) {
    try {
      return action.call();
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new BenchException(what + ": interrupted", e);
    } catch (BenchException e) {
      throw e;
    } catch (Exception e) {
      throw new BenchException(what + ": " + oneLine(e), e);
    }
  }

  /** Closes, ignoring a failure to close: by then the figures are recorded, and the server is killed anyway. */
  static void closeQuietly(AutoCloseable closeable) {
    if (closeable == null) {
      return;
    }
    try {
      closeable.close();
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt(); // ignored like any failure to close, but not swallowed
    } catch (Exception e) {
      // Teardown: the measurement is already recorded and the process-level cleanup still runs.
    }
  }

  static String oneLine(Throwable e) {
    String message = e.getMessage() == null ? "" : ": " + e.getMessage().lines().findFirst().orElse("");
    return e.getClass().getSimpleName() + message;
  }
}
