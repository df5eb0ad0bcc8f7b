import dev.muster.testing.EtcdBinary;
import dev.muster.testing.EtcdCluster;
import io.etcd.jetcd.ByteSequence;
import io.etcd.jetcd.Client;
import io.etcd.jetcd.api.AuthGrpc;
import io.etcd.jetcd.api.AuthenticateRequest;
import io.etcd.jetcd.api.LeaseGrpc;
import io.etcd.jetcd.api.LeaseKeepAliveRequest;
import io.etcd.jetcd.api.LeaseKeepAliveResponse;
import io.grpc.CallOptions;
import io.grpc.Channel;
import io.grpc.ClientCall;
import io.grpc.ClientInterceptor;
import io.grpc.Metadata;
import io.grpc.MethodDescriptor;
import io.grpc.stub.MetadataUtils;
import io.grpc.stub.StreamObserver;
import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.concurrent.ArrayBlockingQueue;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * The two premises of docs/design-registrations.md, item 3, on a private etcd: (1) a ClientInterceptor
 * given to jetcd's builder receives the channel jetcd calls on, and a grpc-java LeaseGrpc stub built on it opens a
 * LeaseKeepAlive stream on jetcd's connection; (2) keepalives sent on that one stream reach etcd once each, where
 * jetcd's keepAliveOnce sends each twice. Counts etcd's received LeaseKeepAlive messages from its /metrics around
 * N keepalives of each kind. With {@code auth} as a third argument etcd runs with auth on (root), and the probe sends one
 * keepalive on a stream without a token and N on a stream with a token from Auth/Authenticate (the second premise).
 * A source-file program, not part of the bench:
 *
 * <pre>
 * java -cp muster-bench/target/muster-bench.jar muster-bench/probe/KeepAliveStreamProbe.java .cache/etcd/default/usr/bin/etcd 100 [auth]
 * </pre>
 * etcd runs under muster-testing's {@link EtcdCluster} (one member, etcd's default timings; with {@code auth}, its
 * root user), stopped by pid on close.
 */
public class KeepAliveStreamProbe {
  private static final Pattern RECEIVED = Pattern.compile(
      "grpc_server_msg_received_total\\{grpc_method=\"LeaseKeepAlive\"[^}]*\\} (\\S+)");

  public static void main(String[] args) throws Exception {
    if (args.length < 2 || args.length > 3 || args.length == 3 && !args[2].equals("auth")) {
      System.err.println("usage: KeepAliveStreamProbe ETCD_BIN N [auth] (e.g. .cache/etcd/default/usr/bin/etcd 100)");
      System.exit(2);
    }
    boolean auth = args.length == 3;
    int n = Integer.parseInt(args[1]);
    Path binary = Path.of(args[0]);
    EtcdCluster.Builder cluster = EtcdCluster.builder().binary(binary);
    if (auth) {
      cluster.auth();
    }
    try (EtcdCluster etcd = cluster.build().start()) {
      String url = etcd.member(0).clientUrl().toString();
      String version = "etcd Version: " + EtcdBinary.version(binary).orElseThrow();
      if (auth) {
        withAuth(url, n, version, etcd.rootPassword());
      } else {
        withoutAuth(url, n, version);
      }
    }
  }

  /** A client with an interceptor that keeps the first channel it is called with. */
  private static Client capturing(String url, AtomicReference<Channel> captured, String user, String password) {
    ClientInterceptor capture = new ClientInterceptor() {
      @Override
      public <Q, A> ClientCall<Q, A> interceptCall(MethodDescriptor<Q, A> method, CallOptions options, Channel next) {
        captured.compareAndSet(null, next);
        return next.newCall(method, options);
      }
    };
    var builder = Client.builder().endpoints(URI.create(url)).interceptor(capture);
    if (user != null) {
      builder.user(bytes(user)).password(bytes(password));
    }
    return builder.build();
  }

  private static ByteSequence bytes(String s) {
    return ByteSequence.from(s, StandardCharsets.UTF_8);
  }

  private static void withAuth(String url, int n, String version, String password) throws Exception {
    AtomicReference<Channel> captured = new AtomicReference<>();
    try (Client client = capturing(url, captured, "root", password)) {
      long lease = client.getLeaseClient().grant(60).get(10, TimeUnit.SECONDS).getID();
      System.out.println(version + "; auth on (root); one lease granted by jetcd as root");
      Channel channel = captured.get();
      Answers noToken = new Answers(1);
      StreamObserver<LeaseKeepAliveRequest> bare = LeaseGrpc.newStub(channel).leaseKeepAlive(noToken);
      bare.onNext(LeaseKeepAliveRequest.newBuilder().setID(lease).build());
      System.out.println("a keepalive on a stream without a token: " + describe(noToken.next()));
      bare.onCompleted();

      String token = AuthGrpc.newBlockingStub(channel).withDeadlineAfter(10, TimeUnit.SECONDS)
          .authenticate(AuthenticateRequest.newBuilder().setName("root").setPassword(password).build()).getToken();
      Metadata headers = new Metadata();
      headers.put(Metadata.Key.of("token", Metadata.ASCII_STRING_MARSHALLER), token);
      double before = received(url);
      Answers withToken = new Answers(n);
      StreamObserver<LeaseKeepAliveRequest> stream = LeaseGrpc.newStub(channel)
          .withInterceptors(MetadataUtils.newAttachHeadersInterceptor(headers)).leaseKeepAlive(withToken);
      int answered = 0;
      for (int i = 0; i < n; i++) {
        stream.onNext(LeaseKeepAliveRequest.newBuilder().setID(lease).build());
        Object answer = withToken.next();
        if (!(answer instanceof LeaseKeepAliveResponse r) || r.getID() != lease || r.getTTL() <= 0) {
          System.out.println("keepalive " + (i + 1) + " with a token: " + describe(answer));
          break;
        }
        answered++;
      }
      stream.onCompleted();
      System.out.printf("one stream with a token from Auth/Authenticate: %d keepalives, %d answered with a TTL,"
          + " etcd received %.0f LeaseKeepAlive messages%n", n, answered, received(url) - before);
    }
  }

  private static String describe(Object answer) {
    if (answer instanceof LeaseKeepAliveResponse r) {
      return "answered, lease " + Long.toHexString(r.getID()) + " TTL " + r.getTTL() + " s";
    }
    return answer instanceof Throwable t ? "failed: " + t : String.valueOf(answer);
  }

  /** A stream's answers, errors and end, in arrival order. */
  private static final class Answers implements StreamObserver<LeaseKeepAliveResponse> {
    private final BlockingQueue<Object> queue;

    Answers(int capacity) {
      queue = new ArrayBlockingQueue<>(capacity + 2);
    }

    Object next() throws InterruptedException {
      Object o = queue.poll(10, TimeUnit.SECONDS);
      return o == null ? "no answer within 10 s" : o;
    }

    @Override
    public void onNext(LeaseKeepAliveResponse response) {
      queue.offer(response);
    }

    @Override
    public void onError(Throwable t) {
      queue.offer(t);
    }

    @Override
    public void onCompleted() {
      queue.offer("completed");
    }
  }

  private static void withoutAuth(String url, int n, String version) throws Exception {
    AtomicReference<Channel> captured = new AtomicReference<>();
    try (Client client = capturing(url, captured, null, null)) {
      long lease = client.getLeaseClient().grant(60).get(10, TimeUnit.SECONDS).getID();
      System.out.println(version + "; one lease, " + n + " keepalives of each kind, one after another");
      System.out.println("channel seen by the interceptor: " + (captured.get() == null ? "none"
          : captured.get().getClass().getName() + " (authority " + captured.get().authority() + ")"));

      double before = received(url);
      for (int i = 0; i < n; i++) {
        client.getLeaseClient().keepAliveOnce(lease).get(10, TimeUnit.SECONDS);
      }
      double afterOnce = received(url);
      System.out.printf("jetcd keepAliveOnce: %d keepalives, etcd received %.0f LeaseKeepAlive messages%n", n,
          afterOnce - before);

      Answers answers = new Answers(n);
      StreamObserver<LeaseKeepAliveRequest> stream = LeaseGrpc.newStub(captured.get()).leaseKeepAlive(answers);
      int answered = 0;
      long ttlSum = 0;
      for (int i = 0; i < n; i++) {
        stream.onNext(LeaseKeepAliveRequest.newBuilder().setID(lease).build());
        Object answer = answers.next();
        if (!(answer instanceof LeaseKeepAliveResponse r)) {
          System.out.println("keepalive " + (i + 1) + " on the shared stream: " + describe(answer));
          break;
        }
        if (r.getID() == lease) {
          answered++;
          ttlSum += r.getTTL();
        }
      }
      stream.onCompleted();
      double afterStream = received(url);
      System.out.printf("one stream on jetcd's channel: %d keepalives, %d answered for the lease (mean TTL %.0f s),"
          + " etcd received %.0f LeaseKeepAlive messages%n", n, answered, answered == 0 ? 0.0 : (double) ttlSum / answered,
          afterStream - afterOnce);
    }
  }

  private static double received(String url) throws IOException, InterruptedException {
    Thread.sleep(200); // etcd counts a message when its handler reads it
    Matcher m = RECEIVED.matcher(metrics(url));
    double sum = 0;
    while (m.find()) {
      sum += Double.parseDouble(m.group(1));
    }
    return sum;
  }

  private static String metrics(String url) throws IOException, InterruptedException {
    HttpRequest request = HttpRequest.newBuilder(URI.create(url + "/metrics")).timeout(Duration.ofSeconds(5)).build();
    return HttpClient.newHttpClient().send(request, HttpResponse.BodyHandlers.ofString()).body();
  }



}
