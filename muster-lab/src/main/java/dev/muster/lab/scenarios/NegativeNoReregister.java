package dev.muster.lab.scenarios;

import dev.muster.lab.Fleet;
import dev.muster.lab.LabContext;
import dev.muster.lab.Scenario;
import dev.muster.lab.ScenarioResult;
import dev.muster.testing.ChildProcess;
import dev.muster.testing.EtcdCluster;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.time.Instant;
import java.util.List;

/**
 * Negative control: a provider that does not re-register after losing its lease (it keeps renewing the dead lease
 * id) is healthy and serving, yet invisible to every consumer.
 */
public final class NegativeNoReregister implements Scenario {
  @Override
  public String name() {
    return "negative_no_reregister";
  }

  @Override
  public String shows() {
    return "negative control: --no-reregister after SIGSTOP > TTL leaves a healthy provider invisible";
  }

  @Override
  public String seed() {
    return "provider healthy but invisible";
  }

  @Override
  public ScenarioResult run(LabContext ctx) throws Exception {
    EtcdCluster etcd = ctx.etcd(1);
    Fleet f = Fleet.providers(ctx, "hello", etcd.endpointsString(), 1, "--no-reregister");
    f.consumers(ctx, etcd.endpointsString(), false, false, true);
    ChildProcess p = f.provider(1);
    Instant stop = Instant.now();
    p.pause();
    ctx.mark("sigstop", p.name());
    ctx.await("the watcher drops p1", Duration.ofSeconds(20), () -> Fleet.removedAt(f.watcher, "p1", stop).isPresent());
    p.resume();
    ctx.mark("sigcont", p.name());
    ctx.await("p1 reports the lost lease", Duration.ofSeconds(20), () -> p.json().has("lease_lost"));
    ctx.sleep(Duration.ofSeconds(3));
    String address = p.json().events("registered").get(0).path("id").asText();
    int status = hello(ctx, p);
    boolean invisible = !Fleet.lastSet(f.watcher).contains("p1");
    boolean pass = p.isAlive() && status == 200 && invisible && !p.json().has("reregistered");
    return ScenarioResult.of(this, pass, String.format("p1 (%s) alive %s, GET /hello %d, in the watcher's set: %s",
        address, p.isAlive(), status, !invisible), "alive and answering 200, absent from the registry");
  }

  /** GET /hello straight at the provider's port (read from its command line). */
  private static int hello(LabContext ctx, ChildProcess p) throws Exception {
    List<String> cmd = p.command();
    String port = cmd.get(cmd.indexOf("--address") + 1).substring("127.0.0.1:".length());
    HttpClient client = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(2)).build();
    return client.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + "/hello"))
        .timeout(Duration.ofSeconds(2)).build(), HttpResponse.BodyHandlers.ofString()).statusCode();
  }
}
