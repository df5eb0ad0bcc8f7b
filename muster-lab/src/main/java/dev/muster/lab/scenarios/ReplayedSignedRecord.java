package dev.muster.lab.scenarios;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.muster.lab.Fleet;
import dev.muster.lab.LabContext;
import dev.muster.lab.LabException;
import dev.muster.lab.Scenario;
import dev.muster.lab.ScenarioResult;
import dev.muster.registry.Instance;
import dev.muster.registry.RegistryLayout;
import dev.muster.sign.RecordSignature;
import dev.muster.testing.ChildProcess;
import io.etcd.jetcd.ByteSequence;
import io.etcd.jetcd.Client;
import io.etcd.jetcd.KeyValue;
import io.etcd.jetcd.lease.LeaseKeepAliveResponse;
import io.etcd.jetcd.support.CloseableClient;
import io.grpc.stub.StreamObserver;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.TimeUnit;

/**
 * Two attacks on signed records that a signature alone does not stop (issue 35), by someone with write access to the
 * provider's prefix and the right to keep any lease alive (etcd 3.4 and 3.5 check no lease ownership):
 * <ol>
 *   <li><b>replay:</b> p1 drains (SIGTERM, a long drain: it keeps serving, its record says DRAINING); the lab puts
 *       p1's own earlier signed {@code UP} value back over it, on the same lease;</li>
 *   <li><b>kept alive:</b> p2 is SIGKILLed while the lab keeps p2's lease alive, so p2's last signed record stays in
 *       etcd for as long as the lab likes.</li>
 * </ol>
 * Consumer T trusts the providers' key ({@code --trust-key}); consumer N does not check. Providers sign with a 60 s
 * validity ({@code --signature-validity 60s}); p3 is left alone, so T always has a provider to call. T must refuse the replay (p1 leaves its set, counted) and drop p2 at
 * its record's {@code notAfter}; N serves the replayed {@code UP} (and calls the draining p1 again) and keeps the
 * dead p2 to the end.
 */
public final class ReplayedSignedRecord implements Scenario {
  private static final Duration VALIDITY = Duration.ofSeconds(60);
  private static final Duration OBSERVE = Duration.ofSeconds(3);
  private static final ObjectMapper JSON = new ObjectMapper();

  @Override
  public String name() {
    return "replayed_signed_record";
  }

  @Override
  public String shows() {
    return "an old signed UP put back over DRAINING, and a dead provider's lease kept alive: T refuses the replay and"
        + " drops the record at its notAfter, N serves both";
  }

  @Override
  public String seed() {
    return "issue 35: signed records that cannot be replayed or kept alive for ever";
  }

  @Override
  public ScenarioResult run(LabContext ctx) throws Exception {
    String endpoints = ctx.etcd(1).endpointsString();
    String key = ForgedRegistration.keygen(ctx, "fleet");
    Fleet f = Fleet.providers(ctx, "hello", endpoints, 3, "--sign-key", key + ".key", "--signature-validity",
        VALIDITY.toSeconds() + "s", "--drain", "120s");
    ChildProcess t = ctx.consumer("consumer-t", f.service, endpoints, true, "--trust-key", key + ".pub");
    ChildProcess n = ctx.consumer("consumer-n", f.service, endpoints, true);
    f.awaitWarm(ctx, t, n);

    RegistryLayout layout = RegistryLayout.defaults();
    String p1Key = layout.instanceKey(Instance.of(f.service, "127.0.0.1", 1).id("p1"));
    String p2Key = layout.instanceKey(Instance.of(f.service, "127.0.0.1", 1).id("p2"));
    try (Client client = Client.builder().endpoints(endpoints.split(",")).build()) {
      // 1. The replay.
      KeyValue up = get(client, p1Key).orElseThrow(() -> new LabException("p1's record is not in etcd"));
      Instant drain = Instant.now();
      f.provider(1).terminate(); // drains for 120 s, serving
      ctx.mark("drain", "SIGTERM to p1: DRAINING for 120 s, still serving");
      ctx.await("N sees p1 DRAINING", Duration.ofSeconds(30), () -> Fleet.drainingAt(n, "p1", drain).isPresent());
      long replayed = ForgedRegistration.put(client, p1Key, up.getValue().getBytes(), up.getLease());
      Instant replayAt = Instant.now();
      ctx.mark("replay", "p1's earlier signed UP put back over DRAINING on its lease " + Long.toHexString(
          up.getLease()) + ", revision " + replayed);
      ctx.await("T and N have taken the replay", Duration.ofSeconds(30),
          () -> revision(t) >= replayed && revision(n) >= replayed);
      ctx.sleep(OBSERVE);
      List<JsonNode> tCalls = Fleet.calls(t, replayAt, Instant.now());
      List<JsonNode> nCalls = Fleet.calls(n, replayAt, Instant.now());
      long tToP1 = Fleet.attemptsTo(tCalls, "p1");
      long nToP1 = Fleet.attemptsTo(nCalls, "p1");
      boolean tRefused = !Fleet.lastSet(t).contains("p1");
      long tUnverified = ForgedRegistration.lastSetLine(t).path("unverified").asLong();

      // 2. A dead provider's lease kept alive by someone else.
      KeyValue p2 = get(client, p2Key).orElseThrow(() -> new LabException("p2's record is not in etcd"));
      Instant notAfter = notAfter(p2.getValue().getBytes());
      try (CloseableClient keeping = client.getLeaseClient().keepAlive(p2.getLease(), ignoring())) {
        Instant killed = Instant.now();
        f.provider(2).kill();
        ctx.mark("kill", "SIGKILL to p2; the lab keeps its lease " + Long.toHexString(p2.getLease()) + " alive;"
            + " its record's notAfter is " + notAfter);
        Duration limit = Duration.between(Instant.now(), notAfter).plus(Duration.ofSeconds(15));
        ctx.await("T drops p2", limit, () -> Fleet.removedAt(t, "p2", killed).isPresent());
        Instant tDropped = Fleet.removedAt(t, "p2", killed).orElseThrow();
        ctx.sleep(OBSERVE);
        boolean nKeeps = Fleet.lastSet(n).contains("p2") && get(client, p2Key).isPresent();
        List<JsonNode> nAfter = Fleet.calls(n, tDropped, Instant.now());
        long nToP2 = Fleet.attemptsTo(nAfter, "p2");
        List<JsonNode> tSince = Fleet.calls(t, replayAt, Instant.now());
        long tFailed = Fleet.failed(tSince);
        long tAll = tSince.size();
        long dropAfterNotAfter = Fleet.millis(notAfter, tDropped);

        boolean pass = tRefused && tToP1 == 0 && tUnverified >= 1 && nToP1 > 0
            && dropAfterNotAfter >= -1_000 && dropAfterNotAfter <= 1_000 && nKeeps;
        return ScenarioResult.of(this, pass, String.format("replay: T dropped p1 (%d refused), %d of %d calls to p1;"
                + " N %d of %d calls to the draining p1. Kept alive: T dropped p2 %d ms after its notAfter (%d s after"
                + " the kill); T failed %d of %d calls from the replay on (p3 serves); N still lists p2 (its calls tried it %d"
                + " times in %d calls since)",
            tUnverified, tToP1, tCalls.size(), nToP1, nCalls.size(), dropAfterNotAfter,
            Duration.between(killed, tDropped).toSeconds(), tFailed, tAll, nToP2, nAfter.size()),
            "T refuses the replayed UP (p1 leaves its set) and drops p2 within 1 s of its record's notAfter; N calls"
                + " the draining p1 again and keeps the dead p2");
      }
    }
  }

  private static long revision(ChildProcess consumer) {
    return ForgedRegistration.lastSetLine(consumer).path("revision").asLong();
  }

  private static Optional<KeyValue> get(Client client, String key) throws Exception {
    return client.getKVClient().get(ByteSequence.from(key, StandardCharsets.UTF_8)).get(10, TimeUnit.SECONDS)
        .getKvs().stream().findFirst();
  }

  /** The {@code notAfter} of a signed value's version 2 signature. */
  private static Instant notAfter(byte[] value) throws Exception {
    JsonNode sig = JSON.readTree(value).path(RecordSignature.MEMBER);
    if (!sig.path("notAfter").canConvertToLong()) {
      throw new LabException("p2's record has no signature with a notAfter: " + sig);
    }
    return Instant.ofEpochSecond(sig.path("notAfter").asLong());
  }

  private static StreamObserver<LeaseKeepAliveResponse> ignoring() {
    return new StreamObserver<>() {
      @Override
      public void onNext(LeaseKeepAliveResponse r) {
      }

      @Override
      public void onError(Throwable t) {
      }

      @Override
      public void onCompleted() {
      }
    };
  }
}
