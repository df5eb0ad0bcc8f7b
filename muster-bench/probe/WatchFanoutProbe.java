import com.google.protobuf.ByteString;
import com.google.protobuf.UnknownFieldSet;
import dev.muster.testing.EtcdBinary;
import dev.muster.testing.EtcdCluster;
import io.etcd.jetcd.ByteSequence;
import io.etcd.jetcd.Client;
import io.etcd.jetcd.api.WatchCreateRequest;
import io.etcd.jetcd.api.WatchGrpc;
import io.etcd.jetcd.api.WatchRequest;
import io.etcd.jetcd.api.WatchResponse;
import io.grpc.CallOptions;
import io.grpc.Channel;
import io.grpc.ClientCall;
import io.grpc.ClientInterceptor;
import io.grpc.MethodDescriptor;
import io.grpc.stub.StreamObserver;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;

/**
 * What one event costs when N watches of the same prefix fire together: on one Watch stream (WatchStream's case
 * when N caches of a JVM watch one service, the scale bench's fleet), on N streams of one channel (jetcd's), or on
 * K streams with the watches spread round-robin (an optional fourth argument, a comma-separated list of K; default
 * {@code 1,N}). For each layout (the list run twice, in turn), the time from a put's answer until all N events
 * arrived, over R puts (one at a time). etcd puts
 * each stream's responses through one 128-slot channel; a watcher whose send finds it full is retried later, as a
 * slow watcher (etcd_debugging_mvcc_slow_watcher_total), so one stream may take longer to deliver N at once. A
 * source-file program, not part of the bench:
 *
 * <pre>
 * java -cp muster-bench/target/muster-bench.jar muster-bench/probe/WatchFanoutProbe.java .cache/etcd/default/usr/bin/etcd 2500 30
 * java -cp muster-bench/target/muster-bench.jar muster-bench/probe/WatchFanoutProbe.java .cache/etcd/default/usr/bin/etcd 2500 30 1,4,8,16,32
 * </pre>
 * etcd runs under muster-testing's {@link EtcdCluster}, stopped by pid on close.
 */
public class WatchFanoutProbe {
  public static void main(String[] args) throws Exception {
    if (args.length != 3 && args.length != 4) {
      System.err.println("usage: WatchFanoutProbe ETCD_BIN N PUTS [K,K,...] (e.g. .cache/etcd/default/usr/bin/etcd"
          + " 2500 30 1,4,8,16,32; default K: 1,N)");
      System.exit(2);
    }
    Path binary = Path.of(args[0]);
    int n = Integer.parseInt(args[1]);
    int puts = Integer.parseInt(args[2]);
    int[] ks = args.length == 4 ? Arrays.stream(args[3].split(",")).mapToInt(Integer::parseInt).toArray()
        : new int[] {1, n};
    int[] layouts = new int[ks.length * 2]; // the list twice, in turn: JIT, cache
    for (int i = 0; i < layouts.length; i++) {
      layouts[i] = ks[i % ks.length];
    }
    try (EtcdCluster etcd = EtcdCluster.builder().binary(binary).build().start()) {
      String url = etcd.member(0).clientUrl().toString();
      System.out.println("etcd Version: " + EtcdBinary.version(binary).orElseThrow() + "; " + n + " watches of one"
          + " prefix; " + puts + " puts each");
      AtomicReference<Channel> captured = new AtomicReference<>();
      ClientInterceptor capture = new ClientInterceptor() {
        @Override
        public <Q, A> ClientCall<Q, A> interceptCall(MethodDescriptor<Q, A> m, CallOptions o, Channel next) {
          captured.compareAndSet(null, next);
          return next.newCall(m, o);
        }
      };
      try (Client client = Client.builder().endpoints(URI.create(url)).interceptor(capture).build()) {
        client.getKVClient().put(bytes("/seed"), bytes("x")).get(10, TimeUnit.SECONDS);
        int round = 0;
        for (int k : layouts) {
          Events events = new Events();
          List<StreamObserver<WatchRequest>> streams = new ArrayList<>();
          String prefix = "/k" + k + "-" + round++ + "/";
          for (int i = 0; i < k; i++) {
            streams.add(WatchGrpc.newStub(captured.get()).watch(events));
          }
          for (int i = 0; i < n; i++) { // round-robin, ids from 1 on each stream
            streams.get(i % k).onNext(create(prefix, i / k + 1));
          }
          if (!events.created.await(60, TimeUnit.SECONDS, n)) {
            System.out.println("not all created within 60 s");
            return;
          }
          double[] ms = new double[puts];
          for (int p = 0; p < puts; p++) {
            events.expect(n);
            client.getKVClient().put(bytes(prefix + "k"), bytes("v" + p)).get(10, TimeUnit.SECONDS);
            long t0 = System.nanoTime();
            if (!events.all.await(30, TimeUnit.SECONDS)) {
              System.out.println("put " + p + ": not all " + n + " events within 30 s");
              return;
            }
            ms[p] = (System.nanoTime() - t0) / 1e6;
          }
          Arrays.sort(ms);
          System.out.printf("%s: all %d events after a put's answer: p50 %.1f ms, p99 %.1f ms, max %.1f ms%n",
              k == 1 ? "one stream, " + n + " watches" : k == n ? n + " streams, one watch each"
                  : k + " streams, " + n / k + (n % k == 0 ? "" : "-" + (n / k + 1)) + " watches each", n, ms[puts / 2],
              ms[Math.min(puts - 1, (int) Math.ceil(puts * 0.99) - 1)], ms[puts - 1]);
          events.closing = true; // the streams fail as the channel shuts down: expected
          streams.forEach(StreamObserver::onCompleted);
        }
      }
    }
  }

  private static WatchRequest create(String prefix, long watchId) {
    byte[] p = prefix.getBytes(StandardCharsets.UTF_8);
    byte[] end = p.clone();
    end[end.length - 1]++;
    WatchCreateRequest.Builder c = WatchCreateRequest.newBuilder().setKey(ByteString.copyFrom(p))
        .setRangeEnd(ByteString.copyFrom(end)).setProgressNotify(true);
    c.setUnknownFields(UnknownFieldSet.newBuilder()
        .addField(7, UnknownFieldSet.Field.newBuilder().addVarint(watchId).build()).build());
    return WatchRequest.newBuilder().setCreateRequest(c).build();
  }

  private static ByteSequence bytes(String s) {
    return ByteSequence.from(s, StandardCharsets.UTF_8);
  }

  /** Counts creates and events over every stream. */
  private static final class Events implements StreamObserver<WatchResponse> {
    final Counter created = new Counter();
    volatile CountDownLatch all = new CountDownLatch(0);
    volatile boolean closing;

    void expect(int n) {
      all = new CountDownLatch(n);
    }

    @Override
    public void onNext(WatchResponse r) {
      if (r.getCreated()) {
        created.add();
      } else if (r.getEventsCount() > 0) {
        all.countDown();
      }
    }

    @Override
    public void onError(Throwable t) {
      if (!closing) {
        System.out.println("a stream failed: " + t);
      }
    }

    @Override
    public void onCompleted() {}
  }

  private static final class Counter {
    private final AtomicInteger n = new AtomicInteger();

    void add() {
      n.incrementAndGet();
    }

    boolean await(long time, TimeUnit unit, int target) throws InterruptedException {
      long deadline = System.nanoTime() + unit.toNanos(time);
      while (n.get() < target && System.nanoTime() < deadline) {
        Thread.sleep(10);
      }
      return n.get() >= target;
    }
  }
}
