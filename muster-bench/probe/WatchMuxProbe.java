import com.google.protobuf.ByteString;
import com.google.protobuf.UnknownFieldSet;
import dev.muster.testing.EtcdBinary;
import dev.muster.testing.EtcdCluster;
import io.etcd.jetcd.ByteSequence;
import io.etcd.jetcd.Client;
import io.etcd.jetcd.api.WatchCancelRequest;
import io.etcd.jetcd.api.WatchCreateRequest;
import io.etcd.jetcd.api.WatchGrpc;
import io.etcd.jetcd.api.WatchProgressRequest;
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
import java.util.List;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;

/**
 * The premises of docs/design-memory.md, item 1, on a private etcd: many watches on one Watch stream opened by
 * Muster on jetcd's channel (captured by a ClientInterceptor, as KeepAliveStreamProbe does). jetcd 0.8.6's
 * generated WatchCreateRequest has no {@code watch_id} field (etcd's field 7), so the probe sets it as a protobuf
 * unknown field and checks that etcd honours it. Then: N creates sent back to back (pipelined) and how long until
 * every one is acknowledged, and whether the acknowledgements come in creation order with the ids asked for; one
 * put reaching exactly the watch of its prefix; a cancel; a create below the compaction revision; and what a
 * progress request on the stream answers (how many responses, which watch id, which revision). A source-file
 * program, not part of the bench:
 *
 * <pre>
 * java -cp muster-bench/target/muster-bench.jar muster-bench/probe/WatchMuxProbe.java .cache/etcd/default/usr/bin/etcd 2500
 * </pre>
 * etcd runs under muster-testing's {@link EtcdCluster}, stopped by pid on close.
 */
public class WatchMuxProbe {
  public static void main(String[] args) throws Exception {
    if (args.length != 2) {
      System.err.println("usage: WatchMuxProbe ETCD_BIN N (e.g. .cache/etcd/default/usr/bin/etcd 2500)");
      System.exit(2);
    }
    Path binary = Path.of(args[0]);
    int n = Integer.parseInt(args[1]);
    try (EtcdCluster etcd = EtcdCluster.builder().binary(binary).build().start()) {
      String url = etcd.member(0).clientUrl().toString();
      System.out.println("etcd Version: " + EtcdBinary.version(binary).orElseThrow() + "; " + n + " watches");
      AtomicReference<Channel> captured = new AtomicReference<>();
      ClientInterceptor capture = new ClientInterceptor() {
        @Override
        public <Q, A> ClientCall<Q, A> interceptCall(MethodDescriptor<Q, A> m, CallOptions o, Channel next) {
          captured.compareAndSet(null, next);
          return next.newCall(m, o);
        }
      };
      try (Client client = Client.builder().endpoints(URI.create(url)).interceptor(capture).build()) {
        long base = client.getKVClient().put(bytes("/probe/seed"), bytes("x")).get(10, TimeUnit.SECONDS)
            .getHeader().getRevision();
        Responses responses = new Responses();
        StreamObserver<WatchRequest> stream = WatchGrpc.newStub(captured.get()).watch(responses);

        long t0 = System.nanoTime();
        for (int i = 1; i <= n; i++) {
          stream.onNext(create("/p/" + i + "/", base, 1000 + i));
        }
        int created = 0;
        int inOrder = 0;
        int idsHonoured = 0;
        while (created < n) {
          WatchResponse r = responses.next();
          if (r == null) {
            System.out.println("no answer within 10 s after " + created + " acknowledgements");
            return;
          }
          if (r.getCreated()) {
            created++;
            if (r.getWatchId() == 1000 + created) {
              inOrder++;
            }
            if (r.getWatchId() > 1000) {
              idsHonoured++;
            }
          }
        }
        double ms = (System.nanoTime() - t0) / 1e6;
        System.out.printf("%d creates pipelined on one stream: all acknowledged in %.0f ms; %d with the watch_id asked"
            + " for; %d in creation order%n", n, ms, idsHonoured, inOrder);

        long put = client.getKVClient().put(bytes("/p/17/k"), bytes("v")).get(10, TimeUnit.SECONDS).getHeader()
            .getRevision();
        List<String> got = new ArrayList<>();
        for (WatchResponse r; (r = responses.next(1)) != null; ) {
          got.add("watch " + r.getWatchId() + ": " + r.getEventsCount() + " event(s)");
        }
        System.out.println("a put under /p/17/ at revision " + put + ": " + got);

        progress(stream, responses, "before the compaction");

        stream.onNext(WatchRequest.newBuilder().setCancelRequest(WatchCancelRequest.newBuilder().setWatchId(1005))
            .build());
        WatchResponse cancel = responses.next();
        System.out.println("cancel of watch 1005: watch " + cancel.getWatchId() + " canceled=" + cancel.getCanceled());

        for (int i = 0; i < 5; i++) {
          client.getKVClient().put(bytes("/probe/other"), bytes("v" + i)).get(10, TimeUnit.SECONDS);
        }
        long compactAt = client.getKVClient().put(bytes("/probe/other"), bytes("last")).get(10, TimeUnit.SECONDS)
            .getHeader().getRevision();
        client.getKVClient().compact(compactAt).get(10, TimeUnit.SECONDS);
        progress(stream, responses, "after the compaction, before the compacted create");
        stream.onNext(create("/q/", base, 99_999));
        WatchResponse compacted = responses.next();
        System.out.println("a create from revision " + base + " after a compaction at " + compactAt + ": watch "
            + compacted.getWatchId() + " created=" + compacted.getCreated() + " canceled=" + compacted.getCanceled()
            + " compact_revision=" + compacted.getCompactRevision() + " reason=\"" + compacted.getCancelReason()
            + "\"");
        for (WatchResponse r; (r = responses.next(1)) != null; ) {
          System.out.println("  then: watch " + r.getWatchId() + " created=" + r.getCreated() + " canceled="
              + r.getCanceled() + " compact_revision=" + r.getCompactRevision());
        }

        progress(stream, responses, "after the compaction and the compacted create");
        stream.onNext(create("/r/", 0, 100_000));
        WatchResponse fresh = responses.next();
        System.out.println("a create from now after that: watch " + fresh.getWatchId() + " created="
            + fresh.getCreated());
        progress(stream, responses, "after that create");
        Responses other = new Responses();
        StreamObserver<WatchRequest> second = WatchGrpc.newStub(captured.get()).watch(other);
        second.onNext(create("/s/", 0, 1));
        other.next();
        progress(second, other, "on a second stream of the same channel");
        second.onCompleted();
        stream.onCompleted();
      }
    }
  }

  /** Asks the stream for progress and prints what comes back within 5 s. */
  private static void progress(StreamObserver<WatchRequest> stream, Responses responses, String when)
      throws InterruptedException {
    stream.onNext(WatchRequest.newBuilder().setProgressRequest(WatchProgressRequest.newBuilder()).build());
    List<String> progress = new ArrayList<>();
    for (WatchResponse r; (r = responses.next(5)) != null; ) {
      progress.add("watch " + r.getWatchId() + " at " + r.getHeader().getRevision() + " (" + r.getEventsCount()
          + " events)");
    }
    System.out.println("a progress request on the stream " + when + ": " + progress.size() + " response(s) in 5 s: "
        + (progress.size() > 5 ? progress.subList(0, 5) + " ..." : progress));
  }

  /** A create with watch_id set as etcd's field 7, which jetcd 0.8.6's generated class does not know. */
  private static WatchRequest create(String prefix, long from, long watchId) {
    byte[] p = prefix.getBytes(StandardCharsets.UTF_8);
    byte[] end = p.clone();
    end[end.length - 1]++;
    WatchCreateRequest.Builder c = WatchCreateRequest.newBuilder().setKey(ByteString.copyFrom(p))
        .setRangeEnd(ByteString.copyFrom(end)).setStartRevision(from).setProgressNotify(true);
    c.setUnknownFields(UnknownFieldSet.newBuilder()
        .addField(7, UnknownFieldSet.Field.newBuilder().addVarint(watchId).build()).build());
    return WatchRequest.newBuilder().setCreateRequest(c).build();
  }

  private static ByteSequence bytes(String s) {
    return ByteSequence.from(s, StandardCharsets.UTF_8);
  }

  /** The stream's responses in arrival order. */
  private static final class Responses implements StreamObserver<WatchResponse> {
    private final LinkedBlockingQueue<Object> queue = new LinkedBlockingQueue<>();

    WatchResponse next() throws InterruptedException {
      return next(10);
    }

    WatchResponse next(int seconds) throws InterruptedException {
      Object o = queue.poll(seconds, TimeUnit.SECONDS);
      if (o instanceof Throwable t) {
        throw new IllegalStateException("the stream failed: " + t, t);
      }
      return (WatchResponse) o;
    }

    @Override
    public void onNext(WatchResponse r) {
      queue.offer(r);
    }

    @Override
    public void onError(Throwable t) {
      queue.offer(t);
    }

    @Override
    public void onCompleted() {
      queue.offer(new IllegalStateException("completed"));
    }
  }
}
