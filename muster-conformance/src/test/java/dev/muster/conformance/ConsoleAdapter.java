package dev.muster.conformance;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.muster.console.ConsoleConfig;
import dev.muster.console.ConsoleServer;
import dev.muster.etcd.EtcdConfig;
import dev.muster.etcd.EtcdMaintenance;
import dev.muster.etcd.EtcdRegistry;
import dev.muster.sign.TrustedKey;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStream;
import java.io.InputStreamReader;
import java.io.UncheckedIOException;
import java.net.InetSocketAddress;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Set;

/**
 * The console (a {@link ConsoleServer} in this JVM), read as a browser reads it: its event stream's service page,
 * whose instances in state UP are what it shows as taking calls. It logs in as a program does, with the server's
 * token as a bearer token.
 */
final class ConsoleAdapter implements Adapter {
  private static final ObjectMapper JSON = new ObjectMapper();

  private final EtcdMaintenance maintenance;
  private final ConsoleServer console;
  private final HttpClient http = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(2)).build();
  private final URI page;

  ConsoleAdapter(EtcdRegistry registry, Setup setup) {
    maintenance = EtcdMaintenance.connect(EtcdConfig.of(setup.endpoints()));
    console = ConsoleServer.start(registry, maintenance, ConsoleConfig.builder()
        .listen(new InetSocketAddress("127.0.0.1", 0)).namespaces(List.of(setup.namespace()))
        .trustedKeys(setup.trustKey() == null ? List.of() : List.of(TrustedKey.read(setup.trustKey()))).build());
    InetSocketAddress a = console.address();
    page = URI.create("http://127.0.0.1:" + a.getPort() + "/api/stream?page=service&ns=" + setup.namespace()
        + "&service=" + Providers.SERVICE);
  }

  ConsoleServer server() {
    return console;
  }

  @Override
  public String column() {
    return "console";
  }

  /** The first {@code state} event of a fresh stream: the page as a browser opening it now would show it. */
  @Override
  public Observation observe() {
    try {
      HttpResponse<InputStream> r = http.send(HttpRequest.newBuilder(page).timeout(Duration.ofSeconds(10))
          .header("Authorization", "Bearer " + console.token()).build(), HttpResponse.BodyHandlers.ofInputStream());
      try (BufferedReader in = new BufferedReader(new InputStreamReader(r.body(), StandardCharsets.UTF_8))) {
        String event = null;
        for (String line = in.readLine(); line != null; line = in.readLine()) {
          if (line.startsWith("event: ")) {
            event = line.substring(7);
          } else if (line.startsWith("data: ") && "state".equals(event)) {
            JsonNode data = JSON.readTree(line.substring(6)).path("data");
            Set<String> up = new LinkedHashSet<>();
            for (JsonNode i : data.path("instances")) {
              if (i.path("state").asText().equals("UP")) {
                up.add(i.path("id").asText());
              }
            }
            return Observation.listing(up, 0, 0, "");
          }
        }
      }
      return Observation.listing(Set.of(), 0, 1, "the stream ended without a state event");
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IllegalStateException(e);
    }
  }

  @Override
  public void close() {
    console.close();
    maintenance.close();
  }
}
