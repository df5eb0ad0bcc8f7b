package dev.muster.dns.internal;

import static org.assertj.core.api.Assertions.assertThat;

import dev.muster.cache.EndpointSet;
import dev.muster.registry.Instance;
import java.time.Clock;
import java.time.Instant;
import java.time.ZoneOffset;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.xbill.DNS.DClass;
import org.xbill.DNS.Flags;
import org.xbill.DNS.HINFORecord;
import org.xbill.DNS.Message;
import org.xbill.DNS.Name;
import org.xbill.DNS.OPTRecord;
import org.xbill.DNS.Rcode;
import org.xbill.DNS.Record;
import org.xbill.DNS.Section;
import org.xbill.DNS.TXTRecord;
import org.xbill.DNS.Type;

/** The replies that keep the gateway from amplifying: minimal ANY, the slip's TC reply, REFUSED, TXT metadata. */
class AbuseResponsesTest {
  private static final Clock CLOCK = Clock.fixed(Instant.parse("2026-12-02T00:00:00Z"), ZoneOffset.UTC);
  private final DnsCounters counters = new DnsCounters();
  private final NamespaceZone zone = new NamespaceZone("default", Name.fromConstantString("muster."), 5, 0, CLOCK);

  private void serve(TxtMetadata txt) {
    List<Instance> instances = List.of(
        Instance.of("orders", "10.0.0.1", 8080).id("a").zone("z1").tag("canary").meta("team", "pay")
            .meta("db-password", "hunter2"),
        Instance.of("orders", "10.0.0.2", 8081).id("b").meta("team", "pay"));
    zone.put(new NamespaceZone.Feed("orders"), ServiceRecords.build("orders", zone.origin(),
        EndpointSet.of(7, instances), null, 5, null, txt));
  }

  private static byte[] query(String name, int type) throws Exception {
    Message m = Message.newQuery(Record.newRecord(Name.fromString(name), type, DClass.IN));
    m.addRecord(new OPTRecord(4096, 0, 0), Section.ADDITIONAL);
    return m.toWire();
  }

  @Test
  void anyGetsOneHinfoAtEveryNameThatExistsAndNeverTheFullSet() throws Exception {
    serve(TxtMetadata.ALL);
    Responder minimal = new Responder(List.of(zone), 1232, null, true, CLOCK, counters);
    Responder full = new Responder(List.of(zone), 1232, null, false, CLOCK, counters);
    for (String name : List.of("_orders._tcp.default.muster.", "a._orders._tcp.default.muster.",
        "orders.default.muster.", "default.muster.", "_services._dns-sd._udp.default.muster.")) {
      byte[] q = query(name, Type.ANY);
      for (boolean udp : new boolean[] {true, false}) {
        Message m = new Message(minimal.respond(q, q.length, udp));
        assertThat(m.getRcode()).as(name).isEqualTo(Rcode.NOERROR);
        assertThat(m.getSection(Section.ANSWER)).as(name).singleElement().isInstanceOfSatisfying(HINFORecord.class,
            h -> {
              assertThat(h.getCPU()).isEqualTo("RFC8482");
              assertThat(h.getOS()).isEmpty();
              assertThat(h.getName()).hasToString(name);
            });
        assertThat(m.getSection(Section.ADDITIONAL)).extracting(Record::getType).containsOnly(Type.OPT);
      }
      byte[] reply = minimal.respond(q, q.length, true);
      byte[] before = full.respond(q, q.length, true);
      assertThat(reply.length).as(name).isLessThan(q.length + 40);
      assertThat(new Message(before).getSection(Section.ANSWER)).as("issue 17's ANY, kept for the bench")
          .hasSizeGreaterThan(0).noneMatch(r -> r instanceof HINFORecord);
    }
    byte[] nx = query("nope.default.muster.", Type.ANY);
    assertThat(new Message(minimal.respond(nx, nx.length, true)).getRcode()).isEqualTo(Rcode.NXDOMAIN);
    byte[] ent = query("_tcp.default.muster.", Type.ANY); // an empty non-terminal: NODATA
    Message nodata = new Message(minimal.respond(ent, ent.length, true));
    assertThat(nodata.getSection(Section.ANSWER)).isEmpty();
    assertThat(nodata.getSection(Section.AUTHORITY)).extracting(Record::getType).containsExactly(Type.SOA);
    assertThat(counters.minimalAny.sum()).as("5 names, each asked 3 times").isEqualTo(15);
  }

  @Test
  void txtCarriesOnlyTheMetadataKeysOptedIn() throws Exception {
    Responder responder = new Responder(List.of(zone), 1232, CLOCK, counters);
    byte[] q = query("a._orders._tcp.default.muster.", Type.TXT);
    serve(TxtMetadata.NONE);
    assertThat(txt(responder, q)).containsExactly("version=v1", "zone=z1", "weight=100", "canary");
    serve(TxtMetadata.of(List.of("team")));
    assertThat(txt(responder, q)).containsExactly("version=v1", "zone=z1", "weight=100", "canary", "team=pay");
    serve(TxtMetadata.of(List.of("*")));
    assertThat(txt(responder, q)).containsExactlyInAnyOrder("version=v1", "zone=z1", "weight=100", "canary",
        "team=pay", "db-password=hunter2");
    // a PTR answer's Additional carries the same TXT records
    serve(TxtMetadata.NONE);
    byte[] ptr = query("_orders._tcp.default.muster.", Type.PTR);
    assertThat(new Message(responder.respond(ptr, ptr.length, false)).getSection(Section.ADDITIONAL))
        .filteredOn(r -> r instanceof TXTRecord).hasSize(2)
        .allSatisfy(r -> assertThat(((TXTRecord) r).getStrings()).noneMatch(s -> s.contains("pay")));
  }

  private static List<String> txt(Responder responder, byte[] q) throws Exception {
    return ((TXTRecord) new Message(responder.respond(q, q.length, true)).getSection(Section.ANSWER).get(0))
        .getStrings();
  }

  @Test
  void theSlipsTcReplyEchoesTheQuestionAndIsNoLargerThanTheQuery() throws Exception {
    serve(TxtMetadata.NONE);
    Responder responder = new Responder(List.of(zone), 1232, CLOCK, counters);
    Message query = Message.newQuery(Record.newRecord(Name.fromString("_orders._tcp.default.muster."), Type.PTR,
        DClass.IN));
    query.getHeader().setFlag(Flags.RD);
    query.addRecord(new OPTRecord(4096, 0, 0), Section.ADDITIONAL);
    byte[] q = query.toWire();
    byte[] tc = responder.truncatedReply(q, q.length);
    assertThat(tc.length).isLessThanOrEqualTo(q.length);
    Message m = new Message(tc);
    assertThat(m.getHeader().getID()).isEqualTo(query.getHeader().getID());
    assertThat(m.getHeader().getFlag(Flags.QR)).isTrue();
    assertThat(m.getHeader().getFlag(Flags.TC)).isTrue();
    assertThat(m.getHeader().getFlag(Flags.RD)).isTrue();
    assertThat(m.getQuestion()).isEqualTo(query.getQuestion());
    assertThat(m.getSection(Section.ANSWER)).isEmpty();
    assertThat(m.getSection(Section.ADDITIONAL)).isEmpty();
    byte[] response = tc.clone(); // a response gets nothing: two servers must not ping-pong
    assertThat(responder.truncatedReply(response, response.length)).isNull();
    byte[] header = java.util.Arrays.copyOf(q, 12);
    assertThat(new Message(responder.truncatedReply(header, 12)).getHeader().getFlag(Flags.TC)).isTrue();
  }

  @Test
  void aSourceOutsideAllowFromIsRefusedWithoutAnAnswer() throws Exception {
    serve(TxtMetadata.NONE);
    Responder responder = new Responder(List.of(zone), 1232, CLOCK, counters);
    byte[] q = query("_orders._tcp.default.muster.", Type.PTR);
    Message refused = new Message(responder.respond(q, q.length, true, false));
    assertThat(refused.getRcode()).isEqualTo(Rcode.REFUSED);
    assertThat(refused.getSection(Section.ANSWER)).isEmpty();
    assertThat(refused.getHeader().getFlag(Flags.AA)).isFalse();
    assertThat(counters.notAllowed.sum()).isEqualTo(1);
    assertThat(new Message(responder.respond(q, q.length, true, true)).getSection(Section.ANSWER)).hasSize(2);
  }
}
