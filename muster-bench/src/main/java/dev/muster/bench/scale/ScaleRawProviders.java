package dev.muster.bench.scale;

import dev.muster.bench.support.GoSignal;
import dev.muster.registry.Instance;
import dev.muster.registry.InstanceCodec;
import dev.muster.registry.RegistryLayout;
import dev.muster.testing.JsonLog;
import io.etcd.jetcd.ByteSequence;
import io.etcd.jetcd.Client;
import io.etcd.jetcd.KV;
import io.etcd.jetcd.op.Cmp;
import io.etcd.jetcd.op.CmpTarget;
import io.etcd.jetcd.op.Op;
import io.etcd.jetcd.options.GetOption;
import io.etcd.jetcd.options.PutOption;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Instant;
import java.util.concurrent.TimeUnit;

/**
 * The raw floor of the scale bench's 1,000 providers (issue 33, item 3): a provider JVM like
 * {@link ScaleProviders}, started and released the same way (the file {@code GO}, the same 32 threads), that makes
 * each registration as bare jetcd calls: a lease grant, then the put-if-absent
 * transaction Muster sends ({@code if create_revision(key) == 0 then put(key, value, lease) else get(key)}), with
 * the same key and value encoding. No keepalives, no registrar: what etcd and jetcd cost for the same burst. The
 * leases are of 15 s (Muster's default TTL) and never renewed, so the bench can wait for them to expire before
 * Muster's burst; a burst slower than 5 s (a busy machine, a JFR recording) had its first keys expire before its
 * last were put, and "all visible at once" never came. It
 * prints {@code connected} (after one warm-up grant and transaction) and {@code registered} (every registration's
 * transaction answered, and when the last was, epoch microseconds) as JSON lines.
 *
 * <p>Usage: {@code ScaleRawProviders ENDPOINTS SERVICE ID_PREFIX COUNT GO}; it runs until it is stopped.
 */
public final class ScaleRawProviders {
  private static final long TTL_SECONDS = 15;
  private static final long TIMEOUT_SECONDS = 60;

  private ScaleRawProviders() {}

  public static void main(String[] args) throws Exception {
    if (args.length != 5) {
      System.err.println("usage: ScaleRawProviders ENDPOINTS SERVICE ID_PREFIX COUNT GO");
      System.exit(2);
    }
    int count = Integer.parseInt(args[3]);
    Path go = Path.of(args[4]);
    RegistryLayout layout = RegistryLayout.defaults();
    try (Client client = Client.builder().endpoints(URI.create(args[0])).build()) {
      register(client, layout, Instance.of(args[1] + "-warmup", "127.0.0.1", 19_999).id(args[2] + "warmup"));
      System.out.println(JsonLog.line(JsonLog.entry("connected", Instant.now()).put("count", count)));
      System.out.flush();
      GoSignal.awaitThenRegister(go, count, i -> register(client, layout,
          Instance.of(args[1], "127.0.0.1", 20_000 + i).id(args[2] + i)));
      System.out.println(JsonLog.line(JsonLog.entry("registered", Instant.now()).put("count", count)
          .put("ts_us", ScaleWatchers.epochMicros())));
      System.out.flush();
      Thread.sleep(Long.MAX_VALUE); // stopped by the bench, by pid
    }
  }

  /** A grant, then the put-if-absent transaction under it; waits for both. */
  private static void register(Client client, RegistryLayout layout, Instance instance) throws Exception {
    long lease = client.getLeaseClient().grant(TTL_SECONDS).get(TIMEOUT_SECONDS, TimeUnit.SECONDS).getID();
    ByteSequence key = ByteSequence.from(layout.instanceKey(instance), StandardCharsets.UTF_8);
    KV kv = client.getKVClient();
    kv.txn().If(new Cmp(key, Cmp.Op.EQUAL, CmpTarget.createRevision(0)))
        .Then(Op.put(key, ByteSequence.from(InstanceCodec.encode(instance)),
            PutOption.builder().withLeaseId(lease).build()))
        .Else(Op.get(key, GetOption.DEFAULT))
        .commit().get(TIMEOUT_SECONDS, TimeUnit.SECONDS);
  }
}
