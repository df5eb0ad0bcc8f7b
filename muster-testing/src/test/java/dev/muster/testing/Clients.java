package dev.muster.testing;

import io.etcd.jetcd.ByteSequence;
import io.etcd.jetcd.Client;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.util.List;

/** jetcd clients for the launcher's own tests: fail fast (no wait-for-ready), few retries. */
final class Clients {
  private Clients() {}

  static Client to(List<URI> endpoints) {
    return Client.builder()
        .endpoints(endpoints.toArray(URI[]::new))
        .waitForReady(false)
        .retryMaxAttempts(2)
        .retryDelay(100)
        .retryMaxDuration(java.time.Duration.ofSeconds(2))
        .build();
  }

  static Client to(URI endpoint) {
    return to(List.of(endpoint));
  }

  static ByteSequence bytes(String s) {
    return ByteSequence.from(s, StandardCharsets.UTF_8);
  }

  static String string(ByteSequence b) {
    return b.toString(StandardCharsets.UTF_8);
  }
}
