package dev.muster.etcd;

import io.etcd.jetcd.ByteSequence;
import io.etcd.jetcd.Client;
import io.etcd.jetcd.KeyValue;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.TimeUnit;

/** A plain jetcd client for checking what is really in etcd, independent of Muster's code. */
final class Etcd implements AutoCloseable {
  final Client client;
  private final URI endpoint;

  Etcd(List<URI> endpoints) {
    endpoint = endpoints.get(0);
    client = Client.builder().endpoints(endpoints.toArray(URI[]::new)).waitForReady(false).build();
  }

  static ByteSequence bytes(String s) {
    return ByteSequence.from(s, StandardCharsets.UTF_8);
  }

  Optional<KeyValue> get(String key) {
    try {
      return client.getKVClient().get(bytes(key)).get(10, TimeUnit.SECONDS).getKvs().stream().findFirst();
    } catch (Exception e) {
      throw new IllegalStateException("get " + key + " failed: " + e, e);
    }
  }

  String value(String key) {
    return get(key).map(kv -> kv.getValue().toString(StandardCharsets.UTF_8)).orElse(null);
  }

  /** Every lease etcd holds, through its JSON gateway (jetcd 0.8.6 has no LeaseLeases call). */
  List<Long> leases() {
    try {
      var http = java.net.http.HttpClient.newHttpClient();
      var request = java.net.http.HttpRequest.newBuilder(endpoint.resolve("/v3/lease/leases"))
          .POST(java.net.http.HttpRequest.BodyPublishers.ofString("{}")).build();
      String body = http.send(request, java.net.http.HttpResponse.BodyHandlers.ofString()).body();
      var json = new com.fasterxml.jackson.databind.ObjectMapper().readTree(body);
      List<Long> ids = new java.util.ArrayList<>();
      json.path("leases").forEach(l -> ids.add(Long.parseLong(l.path("ID").asText())));
      return ids;
    } catch (Exception e) {
      throw new IllegalStateException("listing leases failed: " + e, e);
    }
  }

  void revoke(long lease) {
    try {
      client.getLeaseClient().revoke(lease).get(10, TimeUnit.SECONDS);
    } catch (Exception e) {
      throw new IllegalStateException("revoke failed: " + e, e);
    }
  }

  @Override
  public void close() {
    client.close();
  }
}
