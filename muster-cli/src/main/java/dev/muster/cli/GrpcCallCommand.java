package dev.muster.cli;

import com.fasterxml.jackson.databind.JsonNode;
import dev.muster.etcd.EtcdRegistry;
import dev.muster.grpc.MusterNameResolverProvider;
import dev.muster.grpc.MusterRetryInterceptor;
import dev.muster.grpc.echo.Echo;
import dev.muster.retry.RetryConfig;
import dev.muster.xds.XdsBootstrap;
import io.grpc.CallOptions;
import io.grpc.Channel;
import io.grpc.ClientInterceptors;
import io.grpc.ClientStreamTracer;
import io.grpc.Grpc;
import io.grpc.InsecureChannelCredentials;
import io.grpc.ManagedChannel;
import io.grpc.ManagedChannelBuilder;
import io.grpc.Metadata;
import io.grpc.Status;
import io.grpc.stub.ClientCalls;
import io.grpc.stub.StreamObserver;
import java.io.PrintWriter;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Locale;
import java.util.Set;
import java.util.concurrent.Callable;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;
import picocli.CommandLine.Spec;

/**
 * {@code muster grpc-call SERVICE}: calls the demo service {@code muster.echo.Echo} ({@code muster grpc-serve})
 * through a gRPC channel for {@code muster:///SERVICE}, balanced by the {@code muster} policy (or, for the lab's
 * controls, grpc-java's {@code round_robin} or {@code pick_first}). Prints the per-call lines and the summary of
 * {@code muster call} ({@link CallLines}); "via" is the instance that answered (Echo's {@code served_by}). A call is
 * counted as retried when it made more than one attempt ({@link AttemptCount}: the instances the failed attempts
 * went to are not known here, as the muster policy picks inside the channel); ejections happen inside the channel
 * too and are not counted.
 *
 * <p>The loop and its options are {@link CallLoop}'s (its {@code --attempt-timeout} and {@code --max-retries} apply
 * to the {@code muster} policy's retry interceptor only); calls complete on gRPC's threads.
 */
@Command(name = "grpc-call", description = "Call SERVICE's muster.echo.Echo (Say, or Stream with --stream) through"
    + " a muster:/// gRPC channel. --attempt-timeout and --max-retries apply to --policy muster (its retry"
    + " interceptor); the other policies never retry.")
final class GrpcCallCommand implements Callable<Integer> {
  /** The channel's load-balancing policy; {@link #grpcName()} is what grpc-java's registry knows it by. */
  enum Policy {
    MUSTER("muster"), ROUND_ROBIN("round_robin"), PICK_FIRST("pick_first");

    private final String grpcName;

    Policy(String grpcName) {
      this.grpcName = grpcName;
    }

    String grpcName() {
      return grpcName;
    }
  }

  @Spec
  CommandSpec spec;

  @Mixin
  CommonOptions common;

  @Parameters(index = "0", paramLabel = "SERVICE", description = "The service to call.")
  String service;

  @Mixin
  CallLoop loop;

  @Mixin
  TrustKeyOptions trust;

  @Option(names = "--max-stale", paramLabel = "D", converter = DurationConverter.class,
      description = "With --policy muster: while etcd is unreachable, pick from the last set for at most this long,"
          + " then apply --stale-policy (default: for the whole outage).")
  Duration maxStale;

  @Option(names = "--stale-policy", paramLabel = "P",
      description = "After --max-stale: FAIL_CLOSED (calls fail UNAVAILABLE) or KEEP_FAILING_ENDPOINTS_OUT"
          + " (default FAIL_CLOSED).")
  String stalePolicy;

  @Option(names = "--probe", paramLabel = "SPEC",
      description = "With --policy muster: probe each instance actively: grpc, grpc:SERVICE, tcp or http:/PATH;"
          + " one that fails is not picked (default: no probes).")
  String probe;

  @Option(names = "--delay", paramLabel = "D", defaultValue = "0ms", converter = DurationConverter.class,
      description = "Ask the server to wait this long before answering Say; with --stream, between messages"
          + " (default ${DEFAULT-VALUE}).")
  Duration delay;

  @Option(names = "--stream", description = "Call the server-streaming Stream instead of Say (not idempotent: never"
      + " retried).")
  boolean stream;

  @Option(names = "--messages", paramLabel = "N", defaultValue = "5",
      description = "With --stream: how many messages each call asks for (default ${DEFAULT-VALUE}).")
  int messages;

  @Option(names = "--deadline", paramLabel = "D", defaultValue = "10s", converter = DurationConverter.class,
      description = "Deadline of each call, retries included (default ${DEFAULT-VALUE}).")
  Duration deadline;

  @Option(names = "--xds-server", paramLabel = "HOST:PORT",
      description = "Call through xds:///SERVICE instead, with grpc-java's own xDS client and muster xds at HOST:PORT"
          + " (its bootstrap as muster xds bootstrap prints it); the xds server decides the balancing, so --policy,"
          + " --max-stale, --stale-policy, --probe and --max-retries do not apply (default: muster:///).")
  String xdsServer;

  @Option(names = "--xds-zone", paramLabel = "Z",
      description = "With --xds-server: this client's zone in its bootstrap (default: none).")
  String xdsZone;

  @Option(names = "--policy", paramLabel = "P", defaultValue = "muster",
      description = "The channel's load-balancing policy: muster, round_robin or pick_first (default"
          + " ${DEFAULT-VALUE}).")
  String policy;

  @Override
  public Integer call() throws InterruptedException {
    Policy balancing = validate();
    PrintWriter out = spec.commandLine().getOut();
    CallLines lines = new CallLines(out, service, loop.json, loop.quiet, false);
    EtcdRegistry registry = xdsServer == null ? EtcdRegistry.connect(common.etcdConfig()) : null;
    ManagedChannel channel = xdsServer == null ? channel(registry, balancing) : xdsChannel();
    Channel calls = xdsServer == null && balancing == Policy.MUSTER && loop.maxRetries > 0
        ? ClientInterceptors.intercept(channel,
        MusterRetryInterceptor.create(RetryConfig.defaults().toBuilder().maxRetries(loop.maxRetries)
            .attemptTimeout(loop.attemptTimeout).build())) : channel;
    try {
      loop.run("muster-grpc-call", (n, started, t0, done) -> callOnce(calls,
          (ok, status, servedBy, retried, received, error) -> {
            lines.call(n, started, Duration.ofNanos(System.nanoTime() - t0), new CallLines.Outcome(ok, status,
                servedBy, retried, false, error, stream ? received : null));
            done.run();
          }), () -> lines.summary(0, 0));
      return lines.failed() == 0 ? 0 : Errors.FAILURE;
    } finally {
      channel.shutdownNow();
      channel.awaitTermination(5, TimeUnit.SECONDS);
      if (registry != null) {
        registry.close();
      }
    }
  }

  /** Checks what picocli cannot; throws {@link Errors.UsageException} (exit 2) naming the flag. */
  Policy validate() {
    loop.validate();
    if (deadline.isZero()) {
      throw new Errors.UsageException("--deadline is 0: use a positive duration such as 2s");
    }
    if (stream && messages < 1) {
      throw new Errors.UsageException("--messages is " + messages + ": use 1 or more");
    }
    Policy chosen = null;
    for (Policy p : Policy.values()) {
      if (p.grpcName().equals(policy.toLowerCase(Locale.ROOT))) {
        chosen = p;
      }
    }
    if (chosen == null) {
      throw new Errors.UsageException("--policy is " + policy + ": use muster, round_robin or pick_first");
    }
    if (chosen != Policy.MUSTER && (maxStale != null || stalePolicy != null || probe != null)) {
      throw new Errors.UsageException("--max-stale, --stale-policy and --probe are the muster policy's: drop them"
          + " or use --policy muster");
    }
    if (maxStale != null && (maxStale.isZero() || maxStale.isNegative())) {
      throw new Errors.UsageException("--max-stale is " + maxStale + ": use a positive duration such as 30s");
    }
    if (stalePolicy != null && !List.of("FAIL_CLOSED", "KEEP_FAILING_ENDPOINTS_OUT")
        .contains(stalePolicy.toUpperCase(Locale.ROOT))) {
      throw new Errors.UsageException("--stale-policy is " + stalePolicy + ": use FAIL_CLOSED or"
          + " KEEP_FAILING_ENDPOINTS_OUT");
    }
    if (probe != null) {
      try {
        dev.muster.health.ProbeConfig.parse(probe);
      } catch (dev.muster.InvalidInputException e) {
        throw new Errors.UsageException("--probe " + probe + ": " + e.getMessage());
      }
    }
    trust.keys(); // a bad key file exits 2 here
    if (xdsServer != null) {
      if (spec.commandLine().getParseResult().hasMatchedOption("--policy") || maxStale != null
          || stalePolicy != null || probe != null || spec.commandLine().getParseResult().hasMatchedOption(
              "--max-retries")) {
        throw new Errors.UsageException("--xds-server: the xds server decides the balancing; drop --policy,"
            + " --max-stale, --stale-policy, --probe and --max-retries");
      }
      try {
        bootstrap();
      } catch (dev.muster.InvalidInputException e) {
        throw new Errors.UsageException((e.getMessage().startsWith("zone") ? "--xds-zone: " : "--xds-server: ")
            + e.getMessage());
      }
    } else if (xdsZone != null) {
      throw new Errors.UsageException("--xds-zone is the xDS client's: give --xds-server too");
    }
    return chosen;
  }

  /** What one call ended with; {@code servedBy} the distinct instances that answered, in order. */
  private interface Done {
    void accept(boolean ok, String status, List<String> servedBy, boolean retried, long received, String error);
  }

  /**
   * Counts one call's attempts: each opens a client stream, and {@link MusterRetryInterceptor} makes every attempt a
   * call of its own with the caller's options, so this factory (in those options) sees each one. gRPC's transparent
   * retries (a stream that never reached the server) and its own retry policy's are not Muster's attempts and are not
   * counted.
   */
  static final class AttemptCount extends ClientStreamTracer.Factory {
    private static final ClientStreamTracer NOTHING = new ClientStreamTracer() { };
    private final AtomicInteger attempts = new AtomicInteger();

    @Override
    public ClientStreamTracer newClientStreamTracer(ClientStreamTracer.StreamInfo info, Metadata headers) {
      if (!info.isTransparentRetry() && info.getPreviousAttempts() == 0) {
        attempts.incrementAndGet();
      }
      return NOTHING;
    }

    int attempts() {
      return attempts.get();
    }
  }

  private void callOnce(Channel channel, Done done) {
    AttemptCount attempts = new AttemptCount();
    CallOptions options = CallOptions.DEFAULT.withDeadlineAfter(deadline.toNanos(), TimeUnit.NANOSECONDS)
        .withStreamTracerFactory(attempts);
    Set<String> servedBy = new LinkedHashSet<>();
    AtomicLong received = new AtomicLong();
    StreamObserver<JsonNode> observer = new StreamObserver<>() {
      @Override
      public void onNext(JsonNode reply) {
        received.incrementAndGet();
        synchronized (servedBy) {
          servedBy.add(reply.path("served_by").asText("?"));
        }
      }

      @Override
      public void onError(Throwable t) {
        Status s = Status.fromThrowable(t);
        done.accept(false, s.getCode().name(), via(), attempts.attempts() > 1, received.get(),
            s.getDescription() == null ? s.getCode().name() : s.getCode() + ": " + s.getDescription());
      }

      @Override
      public void onCompleted() {
        done.accept(true, Status.Code.OK.name(), via(), attempts.attempts() > 1, received.get(), null);
      }

      private List<String> via() {
        synchronized (servedBy) {
          return new ArrayList<>(servedBy);
        }
      }
    };
    if (stream) {
      ClientCalls.asyncServerStreamingCall(channel.newCall(Echo.STREAM, options),
          Echo.stream(messages, delay.toMillis()), observer);
    } else {
      ClientCalls.asyncUnaryCall(channel.newCall(Echo.SAY, options), Echo.say("hi", delay.toMillis()), observer);
    }
  }

  /**
   * A channel on {@code muster:///SERVICE?namespace=NS} whose resolver reads {@code registry} (the flags' etcd
   * settings: {@code --endpoints}, TLS, credentials), balanced by {@code balancing}. The resolver proposes the
   * {@code muster} policy in its service config, which a channel prefers to its default policy; for the other
   * policies the channel ignores the resolver's service config, else {@code round_robin} and {@code pick_first}
   * would silently be {@code muster} too.
   */
  /** {@code muster:///SERVICE?namespace=NS}, with the staleness bound and the probe as target parameters. */
  String target() {
    StringBuilder t = new StringBuilder("muster:///").append(service).append("?namespace=").append(common.namespace);
    if (maxStale != null) {
      t.append("&maxStale=").append(maxStale.toMillis()).append("ms");
    }
    if (stalePolicy != null) {
      t.append("&stalePolicy=").append(stalePolicy);
    }
    if (probe != null) {
      t.append("&probe=").append(java.net.URLEncoder.encode(probe, java.nio.charset.StandardCharsets.UTF_8));
    }
    return t.toString();
  }

  private XdsBootstrap bootstrap() {
    XdsBootstrap b = XdsBootstrap.of(xdsServer).withNodeId("grpc-call-"
        + ProcessHandle.current().pid());
    return xdsZone == null ? b : b.withZone(xdsZone);
  }

  /**
   * {@code xds:///SERVICE} with grpc-java's own xDS client. Its bootstrap goes into the system property grpc-java
   * reads (once per process, when the first xDS client is made: this process makes one).
   */
  ManagedChannel xdsChannel() {
    System.setProperty("io.grpc.xds.bootstrapConfig", bootstrap().toJson());
    return Grpc.newChannelBuilder("xds:///" + service, InsecureChannelCredentials.create()).build();
  }

  @SuppressWarnings("deprecation") // nameResolverFactory: the one public way to give one channel its own resolver
  ManagedChannel channel(EtcdRegistry registry, Policy balancing) {
    ManagedChannelBuilder<?> builder = ManagedChannelBuilder.forTarget(target())
        .nameResolverFactory(MusterNameResolverProvider.of(registry, trust.keys()))
        .defaultLoadBalancingPolicy(balancing.grpcName())
        .usePlaintext();
    if (balancing != Policy.MUSTER) {
      builder.disableServiceConfigLookUp();
    }
    return builder.build();
  }
}
