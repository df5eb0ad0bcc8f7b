package dev.muster.bench.support;

import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;

/**
 * One counter from etcd's Prometheus endpoint ({@code GET /metrics} on its client URL): how many messages of one
 * gRPC method etcd has received, summed over its label sets ({@code grpc_server_msg_received_total}).
 */
public final class EtcdMetrics {
  private static final HttpClient HTTP = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();

  private EtcdMetrics() {}

  /** Messages etcd at {@code clientUrl} has received for {@code grpcMethod} (e.g. {@code LeaseKeepAlive}). */
  public static long received(URI clientUrl, String grpcMethod) {
    String body;
    try {
      body = HTTP.send(HttpRequest.newBuilder(clientUrl.resolve("/metrics")).timeout(Duration.ofSeconds(10)).build(),
          HttpResponse.BodyHandlers.ofString()).body();
    } catch (IOException e) {
      throw new BenchException("cannot read " + clientUrl.resolve("/metrics") + ": " + e.getMessage());
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new BenchException("interrupted reading etcd's metrics");
    }
    return received(body, grpcMethod);
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
