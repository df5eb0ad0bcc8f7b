package dev.muster.xds;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import com.fasterxml.jackson.databind.JsonNode;
import dev.muster.etcd.EtcdConfig;
import dev.muster.etcd.EtcdRegistry;
import dev.muster.grpc.echo.Echo;
import dev.muster.registry.Instance;
import dev.muster.registry.RegistrarConfig;
import dev.muster.registry.Registration;
import dev.muster.testing.EtcdCluster;
import io.grpc.Grpc;
import io.grpc.InsecureChannelCredentials;
import io.grpc.ManagedChannel;
import io.grpc.Server;
import io.grpc.netty.NettyServerBuilder;
import io.grpc.stub.ClientCalls;
import io.grpc.xds.InternalSharedXdsClientPoolProvider;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.InetSocketAddress;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * grpc-java's own xDS client ({@code io.grpc:grpc-xds}, the project's gRPC version) calling in-JVM echo servers
 * through {@code xds:///SERVICE}, with {@code muster xds}'s server in the middle: every answer names the server that
 * gave it. Each test uses its own service, so each gets its own xDS client (grpc-java keeps one per target) with
 * the bootstrap that test sets.
 */
@Timeout(value = 3, unit = TimeUnit.MINUTES)
class XdsGrpcJavaIT {
  @RegisterExtension
  static EtcdCluster etcd = EtcdCluster.builder().members(1).build();

  private static EtcdRegistry registry;
  private static XdsServer xds;
  private final List<Server> servers = new ArrayList<>();
  private final List<Registration> registrations = new ArrayList<>();
  private final List<ManagedChannel> channels = new ArrayList<>();

  @BeforeAll
  static void start() {
    registry = EtcdRegistry.connect(EtcdConfig.of(etcd.endpointsString()));
    xds = XdsServer.start(registry, XdsConfig.builder().listen(new InetSocketAddress("127.0.0.1", 0)).build());
  }

  @AfterAll
  static void stop() {
    xds.close();
    registry.close();
    InternalSharedXdsClientPoolProvider.setDefaultProviderBootstrapOverride(null);
  }

  @AfterEach
  void stopServers() {
    channels.forEach(ManagedChannel::shutdownNow);
    registrations.forEach(Registration::close);
    servers.forEach(Server::shutdownNow);
  }

  private Registration provider(String service, String id, int weight, String zone) {
    return provider(service, id, weight, zone, Duration.ZERO);
  }

  private Registration provider(String service, String id, int weight, String zone, Duration drain) {
    Server s;
    try {
      s = NettyServerBuilder.forAddress(new InetSocketAddress("127.0.0.1", 0)).addService(Echo.service(id)).build()
          .start();
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
    servers.add(s);
    Registration r = registry.register(Instance.of(service, "127.0.0.1", s.getPort()).id(id).weight(weight)
        .zone(zone), RegistrarConfig.builder().drain(drain).shutdownHook(false).build());
    registrations.add(r);
    return r;
  }

  /**
   * A channel to {@code xds:///SERVICE} whose xDS client reads this test's bootstrap. grpc-java reads the bootstrap's
   * system property and variables once per JVM; the override below is the per-JVM knob its own tests use, read when
   * a target's xDS client is made, which {@code getState(true)} does at once. (Each new resolver sets it back to
   * none: grpc-java 1.76's XdsNameResolver constructor, so it is set after the channel is built.)
   */
  private ManagedChannel channel(String service, String zone) {
    XdsBootstrap b = XdsBootstrap.of("127.0.0.1:" + xds.address().getPort()).withNodeId("it-" + service);
    ManagedChannel c;
    synchronized (XdsGrpcJavaIT.class) {
      c = Grpc.newChannelBuilder("xds:///" + service, InsecureChannelCredentials.create()).build();
      // after the build: making the channel's resolver sets the override back to none
      InternalSharedXdsClientPoolProvider.setDefaultProviderBootstrapOverride(
          parse((zone == null ? b : b.withZone(zone)).toJson()));
      c.getState(true);
    }
    channels.add(c);
    // The channel's first call waits for grpc-java's client to walk LDS, RDS, CDS and EDS. In a cold test JVM on a
    // loaded machine that took over 5 s (a clean-clone suite of 12b3ef2: 0.3-1.1 s per step in the client, while the
    // server answered each request within 12 ms), so it gets 30 s; the calls after it keep their 5 s.
    ClientCalls.blockingUnaryCall(c, Echo.SAY, io.grpc.CallOptions.DEFAULT.withDeadlineAfter(30, TimeUnit.SECONDS)
        .withWaitForReady(), Echo.say("first", 0));
    return c;
  }

  @SuppressWarnings("unchecked")
  static Map<String, ?> parse(String json) {
    try {
      return new com.fasterxml.jackson.databind.ObjectMapper().readValue(json, Map.class);
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  private static String call(ManagedChannel c) {
    JsonNode reply = ClientCalls.blockingUnaryCall(c, Echo.SAY,
        io.grpc.CallOptions.DEFAULT.withDeadlineAfter(5, TimeUnit.SECONDS), Echo.say("hi", 0));
    return reply.path("served_by").asText();
  }

  private static Map<String, Integer> calls(ManagedChannel c, int n) {
    Map<String, Integer> by = new HashMap<>();
    for (int i = 0; i < n; i++) {
      by.merge(call(c), 1, Integer::sum);
    }
    return by;
  }

  @Test
  void aChannelCallsTheRegisteredProviderAndANewOneJoinsTheRotation() {
    provider("echo1", "a", 100, null);
    ManagedChannel c = channel("echo1", null);

    assertThat(call(c)).isEqualTo("a");

    provider("echo1", "b", 100, null);
    await().atMost(Duration.ofSeconds(10)).until(() -> calls(c, 20).containsKey("b"));
    assertThat(xds.nacks()).as("no response refused").isZero();
    assertThat(xds.pushLatency().samples()).as("the client acknowledged a pushed change").isPositive();
  }

  @Test
  void weightsOneToThreeSplitTrafficOneToThree() {
    provider("echo2", "light", 100, null);
    provider("echo2", "heavy", 300, null);
    ManagedChannel c = channel("echo2", null);
    await().atMost(Duration.ofSeconds(10)).until(() -> calls(c, 40).size() == 2);

    Map<String, Integer> by = calls(c, 2000);

    double heavyShare = by.getOrDefault("heavy", 0) / 2000.0;
    assertThat(heavyShare).as("heavy's share of 2,000 calls, %s", by).isBetween(0.75 * 0.9, 0.75 * 1.1);
  }

  @Test
  void aDrainingProviderGetsNoNewCalls() {
    provider("echo3", "stays", 100, null);
    Registration leaving = provider("echo3", "leaves", 100, null, Duration.ofSeconds(30));
    ManagedChannel c = channel("echo3", null);
    await().atMost(Duration.ofSeconds(10)).until(() -> calls(c, 40).size() == 2);

    leaving.drain(); // DRAINING for 30 s, then revoked

    await().atMost(Duration.ofSeconds(10)).until(() -> !calls(c, 20).containsKey("leaves"));
    assertThat(calls(c, 200)).containsOnlyKeys("stays");
  }

  @Test
  void aClientPrefersItsOwnZoneAndFailsOverWhenItHasNoneLeft() {
    Registration local = provider("echo4", "here", 100, "z1");
    provider("echo4", "there", 100, "z2");
    ManagedChannel c = channel("echo4", "z1");
    await().atMost(Duration.ofSeconds(10)).until(() -> calls(c, 1).containsKey("here"));
    assertThat(calls(c, 100)).containsOnlyKeys("here");

    local.close();

    await().atMost(Duration.ofSeconds(15)).until(() -> calls(c, 1).containsKey("there"));
    assertThat(calls(c, 100)).containsOnlyKeys("there");

    provider("echo4", "back", 100, "z1");
    await().atMost(Duration.ofSeconds(15)).until(() -> calls(c, 1).containsKey("back"));
    assertThat(calls(c, 100)).containsOnlyKeys("back");
  }
}
