import dev.muster.etcd.EtcdConfig;
import dev.muster.etcd.EtcdRegistry;
import dev.muster.registry.Instance;
import dev.muster.registry.RegistrarConfig;
import dev.muster.registry.Registration;
import dev.muster.registry.RegistrationListener;
import io.etcd.jetcd.ByteSequence;
import io.etcd.jetcd.Client;
import io.etcd.jetcd.op.Cmp;
import io.etcd.jetcd.op.CmpTarget;
import io.etcd.jetcd.op.Op;
import io.etcd.jetcd.options.GetOption;
import io.etcd.jetcd.options.PutOption;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.Arrays;

/**
 * register() and close() next to the raw jetcd requests they stand for, in turns on one etcd: a put with a lease, a
 * put-if-absent transaction with a lease (what register() sends), register(), close() and a raw revoke (what close()
 * sends), then the p50 and p90 of each over
 * ROUNDS rounds after 50 warm-up rounds. A source-file program, not part of the bench:
 *
 * <pre>
 * ./muster etcd &   # or any etcd on loopback
 * java -cp muster-bench/target/muster-bench.jar muster-bench/probe/RegisterProbe.java http://127.0.0.1:2379 300
 * </pre>
 * Run it against two builds in turns to compare them (docs/design-perf2.md, "What is left", item 2).
 */
public class RegisterProbe {
  private static ByteSequence bytes(String s) {
    return ByteSequence.from(s, StandardCharsets.UTF_8);
  }

  public static void main(String[] args) throws Exception {
    if (args.length != 2) {
      System.err.println("usage: RegisterProbe ENDPOINT ROUNDS (e.g. http://127.0.0.1:2379 300)");
      System.exit(2);
    }
    String endpoint = args[0];
    int rounds = Integer.parseInt(args[1]);
    int warmup = 50;
    long[] put = new long[rounds];
    long[] txn = new long[rounds];
    long[] register = new long[rounds];
    long[] revoke = new long[rounds];
    long[] close = new long[rounds];
    String run = Long.toString(System.nanoTime(), 36);
    RegistrarConfig config = RegistrarConfig.builder().ttl(Duration.ofSeconds(3))
        .keepaliveInterval(Duration.ofSeconds(1)).drain(Duration.ZERO).shutdownHook(false).build();
    try (EtcdRegistry registry = EtcdRegistry.connect(EtcdConfig.of(endpoint));
         Client raw = Client.builder().endpoints(endpoint).build()) {
      for (int i = -warmup; i < rounds; i++) {
        int n = i + warmup;
        long lease = raw.getLeaseClient().grant(60).get().getID();
        PutOption withLease = PutOption.builder().withLeaseId(lease).build();
        ByteSequence putKey = bytes("/probe-" + run + "/put/" + n);
        long t = System.nanoTime();
        raw.getKVClient().put(putKey, bytes("v"), withLease).get();
        long putNanos = System.nanoTime() - t;
        ByteSequence txnKey = bytes("/probe-" + run + "/txn/" + n);
        t = System.nanoTime();
        raw.getKVClient().txn().If(new Cmp(txnKey, Cmp.Op.EQUAL, CmpTarget.createRevision(0)))
            .Then(Op.put(txnKey, bytes("v"), withLease)).Else(Op.get(txnKey, GetOption.DEFAULT)).commit().get();
        long txnNanos = System.nanoTime() - t;
        Instance instance = Instance.of("probe-" + run, "127.0.0.1", 10_000 + n).id("i" + n);
        t = System.nanoTime();
        Registration registration = registry.register(instance, config, RegistrationListener.NONE);
        long registerNanos = System.nanoTime() - t;
        if (i >= 0) {
          put[i] = putNanos;
          txn[i] = txnNanos;
          register[i] = registerNanos;
        }
        t = System.nanoTime();
        registration.close();
        long closeNanos = System.nanoTime() - t;
        t = System.nanoTime();
        raw.getLeaseClient().revoke(lease).get();
        long revokeNanos = System.nanoTime() - t;
        if (i >= 0) {
          close[i] = closeNanos;
          revoke[i] = revokeNanos;
        }
        Thread.sleep(5);
      }
    }
    print("raw put", put);
    print("raw put-if-absent txn", txn);
    print("register()", register);
    print("raw revoke", revoke);
    print("close()", close);
  }

  private static void print(String what, long[] nanos) {
    long[] sorted = nanos.clone();
    Arrays.sort(sorted);
    System.out.printf("%-24s p50 %.2f ms  p90 %.2f ms%n", what, sorted[sorted.length / 2] / 1e6,
        sorted[sorted.length * 9 / 10] / 1e6);
  }
}
