package dev.muster.bench.support;

import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;

/**
 * Counters from etcd's Prometheus endpoint ({@code GET /metrics} on its client URL): how many messages of one
 * gRPC method etcd has received, summed over its label sets ({@code grpc_server_msg_received_total}), and its Watch
 * service's messages and streams ({@link #watch}).
 */
public final class EtcdMetrics {
  private static final HttpClient HTTP = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();
  private static final String WATCH_SERVICE = "etcdserverpb.Watch";

  private EtcdMetrics() {}

  /**
   * etcd's Watch service at one moment: {@code messages} received on Watch streams (creates, cancels and progress
   * requests: {@code grpc_server_msg_received_total}) and {@code streams} opened ({@code grpc_server_started_total}),
   * both with {@code grpc_service="etcdserverpb.Watch",grpc_method="Watch"}. gRPC's health service has a method named
   * Watch too; it is not counted.
   */
  public record WatchCounts(long messages, long streams) {}

  /** Messages etcd at {@code clientUrl} has received for {@code grpcMethod} (e.g. {@code LeaseKeepAlive}). */
  public static long received(URI clientUrl, String grpcMethod) {
    return received(body(clientUrl, Duration.ofSeconds(10)), grpcMethod);
  }

  /** etcd's Watch counters at {@code clientUrl}; {@link BenchException} when it does not answer in {@code timeout}. */
  public static WatchCounts watch(URI clientUrl, Duration timeout) {
    return watch(body(clientUrl, timeout));
  }

  static WatchCounts watch(String body) {
    return new WatchCounts(counter(body, "grpc_server_msg_received_total", WATCH_SERVICE, "Watch"),
        counter(body, "grpc_server_started_total", WATCH_SERVICE, "Watch"));
  }

  private static String body(URI clientUrl, Duration timeout) {
    try {
      return HTTP.send(HttpRequest.newBuilder(clientUrl.resolve("/metrics")).timeout(timeout).build(),
          HttpResponse.BodyHandlers.ofString()).body();
    } catch (IOException e) {
      throw new BenchException("cannot read " + clientUrl.resolve("/metrics") + ": " + e.getMessage());
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new BenchException("interrupted reading etcd's metrics");
    }
  }

  /** The sum of {@code name{...}} over the label sets with this gRPC service and method. */
  static long counter(String body, String name, String grpcService, String grpcMethod) {
    String service = "grpc_service=\"" + grpcService + "\"";
    String method = "grpc_method=\"" + grpcMethod + "\"";
    long sum = 0;
    boolean found = false;
    for (String line : body.split("\n")) {
      if (line.startsWith(name + "{") && line.contains(service) && line.contains(method)) {
        sum += (long) Double.parseDouble(line.substring(line.lastIndexOf(' ') + 1).trim());
        found = true;
      }
    }
    if (!found) {
      throw new BenchException("etcd's /metrics has no " + name + " for " + grpcService + "/" + grpcMethod);
    }
    return sum;
  }

  /**
   * etcd's load at one moment: Range requests received, messages sent on Watch streams (events, progress), and bytes
   * sent to clients over gRPC ({@code etcd_network_client_grpc_sent_bytes_total}).
   */
  public record Load(long ranges, long watchMessagesSent, long bytesSent) {
    public Load minus(Load before) {
      return new Load(ranges - before.ranges, watchMessagesSent - before.watchMessagesSent,
          bytesSent - before.bytesSent);
    }
  }

  /** {@link Load} of etcd at {@code clientUrl}. */
  public static Load load(URI clientUrl) {
    String body = body(clientUrl, Duration.ofSeconds(10));
    return new Load(received(body, "Range"), counter(body, "grpc_server_msg_sent_total", WATCH_SERVICE, "Watch"),
        plain(body, "etcd_network_client_grpc_sent_bytes_total"));
  }

  /** The value of an unlabelled counter {@code name} in a Prometheus text body. */
  static long plain(String body, String name) {
    for (String line : body.split("\n")) {
      if (line.startsWith(name + " ")) {
        return (long) Double.parseDouble(line.substring(name.length() + 1).trim());
      }
    }
    throw new BenchException("etcd's /metrics has no " + name);
  }

  /** The sum of {@code grpc_server_msg_received_total{...grpc_method="M"...}} in a Prometheus text body. */
  static long received(String body, String grpcMethod) {
    String method = "grpc_method=\"" + grpcMethod + "\"";
    long sum = 0;
    boolean found = false;
    for (String line : body.split("\n")) {
      if (line.startsWith("grpc_server_msg_received_total{") && line.contains(method)) {
        String value = line.substring(line.lastIndexOf(' ') + 1).trim();
        sum += (long) Double.parseDouble(value);
        found = true;
      }
    }
    if (!found) {
      throw new BenchException("etcd's /metrics has no grpc_server_msg_received_total for " + grpcMethod);
    }
    return sum;
  }
}
