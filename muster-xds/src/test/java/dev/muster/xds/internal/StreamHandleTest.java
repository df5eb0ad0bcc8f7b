package dev.muster.xds.internal;

import static org.assertj.core.api.Assertions.assertThat;

import dev.muster.cache.EndpointDelta;
import dev.muster.cache.EndpointSet;
import dev.muster.outlier.OutlierConfig;
import dev.muster.registry.Instance;
import io.envoyproxy.envoy.config.endpoint.v3.ClusterLoadAssignment;
import io.envoyproxy.envoy.service.discovery.v3.DiscoveryRequest;
import io.envoyproxy.envoy.service.discovery.v3.DiscoveryResponse;
import io.grpc.Status;
import io.grpc.stub.ServerCallStreamObserver;
import java.util.ArrayList;
import java.util.List;
import java.util.function.Consumer;
import org.junit.jupiter.api.Test;

/**
 * One stream's runtime on a caller-runs pool, with feeds that open no cache: the test publishes each set itself,
 * at the moment it chooses.
 */
class StreamHandleTest {
  private static final String SERVICE = "orders";
  private static final Instance A = Instance.of(SERVICE, "127.0.0.1", 7001).id("a");
  private static final Instance B = Instance.of(SERVICE, "127.0.0.1", 7002).id("b");

  private final List<ServiceFeed> opened = new ArrayList<>();
  private final ServiceFeeds feeds = new ServiceFeeds(false,
      s -> XdsResources.cluster(s, OutlierConfig.defaults(), 50), (service, feed) -> {
        opened.add(feed);
        return feed; // no cache: the test publishes
      }, 10);
  private EndpointSet last = EndpointSet.EMPTY;

  private void publish(Instance... instances) {
    EndpointSet next = EndpointSet.of(last.revision() + 1, List.of(instances));
    opened.get(0).onChange(next, EndpointDelta.between(EndpointDelta.Kind.UPDATE, last, next));
    last = next;
  }

  @Test
  void aChangePublishedWhileAStreamJoinsAFeedReachesIt() {
    Client first = new Client(o -> { });
    first.ask();
    publish(A);
    assertThat(first.endpoints()).containsExactly("a");

    // The second stream reads the feed's set (a), then, before it subscribes, b is published: only the first
    // stream was subscribed to hear it.
    Client second = new Client(o -> {
      if (o.kind() == AdsStream.Kind.INITIAL) {
        publish(A, B);
      }
    });
    second.ask();

    assertThat(first.endpoints()).containsExactly("a", "b");
    assertThat(second.endpoints()).as("the second stream's last assignment").containsExactly("a", "b");
  }

  @Test
  void aStreamThatJoinsAQuietFeedGetsOneResponse() {
    Client first = new Client(o -> { });
    first.ask();
    publish(A);
    Client second = new Client(o -> { });
    second.ask();
    assertThat(second.sent).hasSize(1);
    assertThat(second.endpoints()).containsExactly("a");
  }

  /** A stream's client: its requests go in, the responses the stream sends are kept. */
  private final class Client implements StreamHandle.Server {
    final List<DiscoveryResponse> sent = new ArrayList<>();
    final Consumer<AdsStream.Outcome> onCounted;
    final StreamHandle handle;

    Client(Consumer<AdsStream.Outcome> onCounted) {
      this.onCounted = onCounted;
      this.handle = new StreamHandle(1, this, new Observer(sent), Runnable::run);
    }

    void ask() {
      handle.onNext(DiscoveryRequest.newBuilder().setTypeUrl(XdsType.ENDPOINT.typeUrl())
          .addResourceNames(SERVICE).build());
    }

    List<String> endpoints() {
      assertThat(sent).as("responses").isNotEmpty();
      try {
        ClusterLoadAssignment cla = sent.get(sent.size() - 1).getResources(0).unpack(ClusterLoadAssignment.class);
        return cla.getEndpointsList().stream().map(l -> l.getLocality().getSubZone()).sorted().toList();
      } catch (com.google.protobuf.InvalidProtocolBufferException e) {
        throw new AssertionError(e);
      }
    }

    @Override
    public ServiceFeeds feeds() {
      return feeds;
    }

    @Override
    public void counted(AdsStream.Outcome o, XdsType type, String node, String refusal) {
      onCounted.accept(o);
    }

    @Override
    public void sent(XdsType type, int bytes) {}

    @Override
    public void applied(long stamp) {}

    @Override
    public void written(long stamp) {}

    @Override
    public void closed(StreamHandle h) {}

    @Override
    public int maxNames() {
      return 100;
    }

    @Override
    public void refused(String node, String why) {}
  }

  /** A transport that is always ready and keeps what is sent. */
  private static final class Observer extends ServerCallStreamObserver<DiscoveryResponse> {
    private final List<DiscoveryResponse> sent;

    Observer(List<DiscoveryResponse> sent) {
      this.sent = sent;
    }

    @Override
    public boolean isCancelled() {
      return false;
    }

    @Override
    public void setOnCancelHandler(Runnable onCancelHandler) {}

    @Override
    public void setCompression(String compression) {}

    @Override
    public boolean isReady() {
      return true;
    }

    @Override
    public void setOnReadyHandler(Runnable onReadyHandler) {}

    @Override
    public void disableAutoInboundFlowControl() {}

    @Override
    public void request(int count) {}

    @Override
    public void setMessageCompression(boolean enable) {}

    @Override
    public void onNext(DiscoveryResponse value) {
      sent.add(value);
    }

    @Override
    public void onError(Throwable t) {
      throw new AssertionError("the stream ended: " + Status.fromThrowable(t));
    }

    @Override
    public void onCompleted() {}
  }
}
