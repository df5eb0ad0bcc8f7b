package dev.muster.xds.internal;

import static org.assertj.core.api.Assertions.assertThat;

import com.google.protobuf.Any;
import com.google.protobuf.StringValue;
import dev.muster.xds.internal.AdsStream.Kind;
import dev.muster.xds.internal.AdsStream.Outcome;
import dev.muster.xds.internal.AdsStream.Request;
import dev.muster.xds.internal.AdsStream.Resource;
import dev.muster.xds.internal.AdsStream.Response;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

class AdsStreamTest {
  /** Resources by type and name; an assignment per zone when one is put for it. */
  private final Map<String, Resource> world = new HashMap<>();
  private final AdsStream stream = new AdsStream(this::lookUp, "z1");

  private Resource lookUp(XdsType type, String name, String zone) {
    Resource zoned = world.get(type + "/" + name + "@" + zone);
    return zoned != null ? zoned : world.get(type + "/" + name);
  }

  private void put(XdsType type, String name, String version) {
    world.put(type + "/" + name, new Resource(name, version, Any.pack(StringValue.of(name + "@" + version))));
  }

  private static Request initial(XdsType type, String... names) {
    return new Request(type, List.of(names), "", "", null);
  }

  private static Request ack(Response r, String... names) {
    return new Request(r.type(), List.of(names), r.version(), r.nonce(), null);
  }

  private static Request nack(Response r, String acceptedVersion, String... names) {
    return new Request(r.type(), List.of(names), acceptedVersion, r.nonce(), "bad cluster");
  }

  private static List<String> bodies(Response r) {
    return r.resources().stream().map(a -> {
      try {
        return a.unpack(StringValue.class).getValue();
      } catch (com.google.protobuf.InvalidProtocolBufferException e) {
        throw new AssertionError(e);
      }
    }).toList();
  }

  @Test
  void theFirstRequestOfATypeGetsEverySubscribedResourceThatExists() {
    put(XdsType.LISTENER, "orders", "a");
    put(XdsType.LISTENER, "users", "a");

    Outcome o = stream.onRequest(initial(XdsType.LISTENER, "orders", "users"));

    assertThat(o.kind()).isEqualTo(Kind.INITIAL);
    assertThat(o.response().version()).isEqualTo("1");
    assertThat(bodies(o.response())).containsExactly("orders@a", "users@a");
  }

  @Test
  void anAckOfUnchangedContentGetsNoResponse() {
    put(XdsType.CLUSTER, "orders", "a");
    Response first = stream.onRequest(initial(XdsType.CLUSTER, "orders")).response();

    Outcome o = stream.onRequest(ack(first, "orders"));

    assertThat(o.kind()).isEqualTo(Kind.ACK);
    assertThat(o.response()).isNull();
    assertThat(stream.ackedVersion(XdsType.CLUSTER)).isEqualTo(first.version());
    assertThat(stream.acks()).isEqualTo(1);
  }

  @Test
  void aChangedResourceIsSentWithANewVersionAndNonce() {
    put(XdsType.ENDPOINT, "orders", "r5");
    Response first = stream.onRequest(initial(XdsType.ENDPOINT, "orders")).response();
    stream.onRequest(ack(first, "orders"));

    put(XdsType.ENDPOINT, "orders", "r6");
    Response second = stream.onChange(XdsType.ENDPOINT);

    assertThat(second.version()).isNotEqualTo(first.version());
    assertThat(second.nonce()).isNotEqualTo(first.nonce());
    assertThat(bodies(second)).containsExactly("orders@r6");
    assertThat(stream.onChange(XdsType.ENDPOINT)).as("nothing changed since").isNull();
  }

  @Test
  void aNackedVersionIsNotSentAgainButTheNextChangeIs() {
    put(XdsType.CLUSTER, "orders", "a");
    Response refusedOne = stream.onRequest(initial(XdsType.CLUSTER, "orders")).response();

    Outcome o = stream.onRequest(nack(refusedOne, "", "orders"));

    assertThat(o.kind()).isEqualTo(Kind.NACK);
    assertThat(o.response()).as("the refused content, not resent").isNull();
    assertThat(stream.onChange(XdsType.CLUSTER)).as("nor on an unrelated change").isNull();
    assertThat(stream.nacks()).isEqualTo(1);
    assertThat(stream.refusal(XdsType.CLUSTER)).isEqualTo("bad cluster");

    put(XdsType.CLUSTER, "orders", "b");
    Response next = stream.onChange(XdsType.CLUSTER);
    assertThat(bodies(next)).containsExactly("orders@b");
    stream.onRequest(ack(next, "orders"));
    assertThat(stream.refusal(XdsType.CLUSTER)).isNull();
  }

  @Test
  void contentThatReturnsToWhatTheClientLastAcceptedIsSentAfterARefusal() {
    put(XdsType.CLUSTER, "orders", "a");
    Response accepted = stream.onRequest(initial(XdsType.CLUSTER, "orders")).response();
    stream.onRequest(ack(accepted, "orders"));
    put(XdsType.CLUSTER, "orders", "b");
    Response refused = stream.onChange(XdsType.CLUSTER);
    stream.onRequest(nack(refused, accepted.version(), "orders"));

    put(XdsType.CLUSTER, "orders", "a");

    assertThat(bodies(stream.onChange(XdsType.CLUSTER))).containsExactly("orders@a");
  }

  @Test
  void aRequestWithAnOlderNonceIsIgnoredEvenIfItsNamesDiffer() {
    put(XdsType.ENDPOINT, "orders", "r5");
    put(XdsType.ENDPOINT, "users", "r5");
    Response first = stream.onRequest(initial(XdsType.ENDPOINT, "orders")).response();
    put(XdsType.ENDPOINT, "orders", "r6");
    stream.onChange(XdsType.ENDPOINT); // a newer response, which the client has not answered yet

    Outcome o = stream.onRequest(ack(first, "orders", "users"));

    assertThat(o.kind()).isEqualTo(Kind.STALE);
    assertThat(o.response()).isNull();
    assertThat(stream.names(XdsType.ENDPOINT)).containsExactly("orders");
    assertThat(stream.staleRequests()).isEqualTo(1);
  }

  @Test
  void aNewSubscriptionInAnAckIsAnsweredWithEveryNameOfTheType() {
    put(XdsType.ENDPOINT, "orders", "r5");
    put(XdsType.ENDPOINT, "users", "r7");
    Response first = stream.onRequest(initial(XdsType.ENDPOINT, "orders")).response();

    Response both = stream.onRequest(ack(first, "orders", "users")).response();

    assertThat(bodies(both)).containsExactly("orders@r5", "users@r7");
  }

  @Test
  void anAssignmentNotKnownYetGetsNoResponseUntilItIs() {
    Outcome o = stream.onRequest(initial(XdsType.ENDPOINT, "orders"));

    assertThat(o.response()).as("an empty EDS response says nothing").isNull();
    put(XdsType.ENDPOINT, "orders", "r5");
    assertThat(bodies(stream.onChange(XdsType.ENDPOINT))).containsExactly("orders@r5");
  }

  @Test
  void aListenerThatDoesNotExistGetsAnEmptyResponseSoTheClientKnowsAtOnce() {
    Response r = stream.onRequest(initial(XdsType.LISTENER, "not/a/service")).response();

    assertThat(r).isNotNull();
    assertThat(r.resources()).isEmpty();
    assertThat(stream.onChange(XdsType.LISTENER)).isNull();
  }

  @Test
  void aWildcardRequestGetsNothing() {
    put(XdsType.LISTENER, "orders", "a");

    assertThat(stream.onRequest(initial(XdsType.LISTENER)).response()).isNull();
  }

  @Test
  void theClientsZoneChoosesItsVariantOfAnAssignment() {
    put(XdsType.ENDPOINT, "orders", "r5");
    world.put("ENDPOINT/orders@z1", new Resource("orders", "r5-z1",
        Any.pack(StringValue.of("orders for z1"))));

    Response r = stream.onRequest(initial(XdsType.ENDPOINT, "orders")).response();

    assertThat(bodies(r)).containsExactly("orders for z1");
  }

  @Test
  void aClientThatReconnectsWithANonceFromAnotherStreamIsAnsweredAsNew() {
    put(XdsType.LISTENER, "orders", "a");

    Outcome o = stream.onRequest(new Request(XdsType.LISTENER, List.of("orders"), "7", "41", null));

    assertThat(o.kind()).isEqualTo(Kind.INITIAL);
    assertThat(bodies(o.response())).containsExactly("orders@a");
  }

  @Test
  void typesKeepTheirOwnVersionsAndShareOneNonceCounter() {
    put(XdsType.LISTENER, "orders", "a");
    put(XdsType.CLUSTER, "orders", "a");

    Response l = stream.onRequest(initial(XdsType.LISTENER, "orders")).response();
    Response c = stream.onRequest(initial(XdsType.CLUSTER, "orders")).response();

    assertThat(l.version()).isEqualTo("1");
    assertThat(c.version()).isEqualTo("1");
    assertThat(l.nonce()).isNotEqualTo(c.nonce());
  }
}
