import dev.muster.cache.CacheConfig;
import dev.muster.cache.EndpointCache;
import dev.muster.etcd.EtcdConfig;
import dev.muster.etcd.EtcdRegistry;
import dev.muster.testing.EtcdCluster;
import io.etcd.jetcd.ByteSequence;
import io.etcd.jetcd.Client;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.concurrent.TimeUnit;

/**
 * Whether a cache whose watch delivered an event resyncs when a compaction passes its checkpoint on a quiet prefix
 * (docs/design-audit.md, "Open"): ROUNDS rounds, each a new service, one event through the cache's watch, WAIT_MS,
 * five writes elsewhere, a compaction, then a wait; prints the cache's resyncs and audits per round. A source-file
 * program, not part of the bench:
 *
 * <pre>
 * java -cp muster-bench/target/muster-bench.jar muster-bench/probe/CompactionResyncProbe.java ETCD_BIN AUDIT_S ROUNDS WAIT_MS
 * </pre>
 */
public class CompactionResyncProbe {
  public static void main(String[] args) throws Exception {
    Duration audit = Duration.ofSeconds(Long.parseLong(args[1]));
    int rounds = Integer.parseInt(args[2]);
    long waitAfterEventMs = Long.parseLong(args[3]);
    try (EtcdCluster etcd = EtcdCluster.builder().binary(Path.of(args[0])).build().start();
         EtcdRegistry muster = EtcdRegistry.connect(EtcdConfig.of(etcd.endpointsString()));
         Client raw = Client.builder().endpoints(URI.create(etcd.endpointsString())).build()) {
      int resynced = 0;
      for (int r = 0; r < rounds; r++) {
        String svc = "svc" + r;
        String prefix = "/muster/default/" + svc + "/v1/";
        raw.getKVClient().put(b(prefix + "i1"), b("{\"address\":\"10.0.0.1\",\"port\":80}")).get(5, TimeUnit.SECONDS);
        EndpointCache cache = muster.watch(CacheConfig.builder(svc).auditInterval(audit).build());
        cache.awaitReady(Duration.ofSeconds(10));
        long rev = raw.getKVClient().put(b(prefix + "i2"), b("{\"address\":\"10.0.0.2\",\"port\":80}"))
            .get(5, TimeUnit.SECONDS).getHeader().getRevision();
        long deadline = System.nanoTime() + 10_000_000_000L;
        while (cache.revision() < rev && System.nanoTime() < deadline) {
          Thread.sleep(5);
        }
        Thread.sleep(waitAfterEventMs);
        long last = 0;
        for (int i = 0; i < 5; i++) {
          last = raw.getKVClient().put(b("/elsewhere/" + svc + "/" + i), b("x")).get(5, TimeUnit.SECONDS)
              .getHeader().getRevision();
        }
        raw.getKVClient().compact(last).get(5, TimeUnit.SECONDS);
        Thread.sleep(audit.isZero() ? 1500 : audit.toMillis() * 2);
        if (cache.resyncCount() > 0) {
          resynced++;
        }
        System.out.printf("round %d: event at %d, compacted at %d, resyncs %d, audits %d%n", r, rev, last,
            cache.resyncCount(), cache.auditCount());
        cache.close();
      }
      System.out.println("resynced in " + resynced + " of " + rounds + " rounds");
    }
  }

  static ByteSequence b(String s) {
    return ByteSequence.from(s, StandardCharsets.UTF_8);
  }
}
