package dev.muster.dns.internal;

import static org.assertj.core.api.Assertions.assertThat;

import dev.muster.cache.EndpointSet;
import dev.muster.dns.BadPackets;
import dev.muster.registry.Instance;
import dev.muster.registry.InstanceState;
import java.io.IOException;
import java.time.Clock;
import java.time.Instant;
import java.time.ZoneOffset;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import org.junit.jupiter.api.Test;
import org.xbill.DNS.DClass;
import org.xbill.DNS.Flags;
import org.xbill.DNS.Message;
import org.xbill.DNS.Name;
import org.xbill.DNS.OPTRecord;
import org.xbill.DNS.Opcode;
import org.xbill.DNS.Rcode;
import org.xbill.DNS.Record;
import org.xbill.DNS.SRVRecord;
import org.xbill.DNS.Section;
import org.xbill.DNS.TXTRecord;
import org.xbill.DNS.Type;

/** The answers themselves, from hand-built zones: every record kind, every negative answer, every refusal. */
class ResponderTest {
  private static final Clock CLOCK = Clock.fixed(Instant.parse("2026-12-02T00:00:00Z"), ZoneOffset.UTC);
  private final DnsCounters counters = new DnsCounters();
  private final NamespaceZone zone = new NamespaceZone("default", Name.fromConstantString("muster."), 5, 0, CLOCK);
  private final Responder responder = new Responder(List.of(zone), 1232, CLOCK, counters);

  private void serve(String service, List<Instance> instances, Instant staleSince, String localZone) {
    serve(service, instances, staleSince, localZone, TxtMetadata.NONE);
  }

  private void serve(String service, List<Instance> instances, Instant staleSince, String localZone,
      TxtMetadata txt) {
    zone.put(new NamespaceZone.Feed(service), ServiceRecords.build(service, zone.origin(),
        EndpointSet.of(42, instances), staleSince, staleSince == null ? 5 : 0, localZone, txt));
  }

  private static Instance orders(String id, String address, int port) {
    return Instance.of("orders", address, port).id(id);
  }

  private Message ask(String name, int type) throws IOException {
    return ask(Message.newQuery(Record.newRecord(Name.fromString(name), type, DClass.IN)), true);
  }

  private Message ask(Message query, boolean udp) throws IOException {
    byte[] reply = responder.respond(query.toWire(), query.toWire().length, udp);
    assertThat(reply).as("a reply").isNotNull();
    return new Message(reply);
  }

  private static List<String> data(Message m, int section) {
    return m.getSection(section).stream().filter(r -> r.getType() != Type.OPT).map(Record::rdataToString).toList();
  }

  @Test
  void repliesAreCountedByQuestionTypeAndResult() throws IOException {
    serve("orders", List.of(orders("a", "10.0.0.1", 8080)), null, null);
    ask("_orders._tcp.default.muster.", Type.SRV);
    ask("_orders._tcp.default.muster.", Type.SRV);
    ask("_orders._tcp.default.muster.", Type.TXT); // NODATA
    ask("nothing.default.muster.", Type.A); // NXDOMAIN
    ask("example.com.", Type.AAAA); // not ours: REFUSED
    ask("_orders._tcp.default.muster.", Type.NAPTR); // counted as other

    assertThat(counters.replies("SRV", "answered")).isEqualTo(2);
    assertThat(counters.replies("TXT", "nodata")).isEqualTo(1);
    assertThat(counters.replies("A", "nxdomain")).isEqualTo(1);
    assertThat(counters.replies("AAAA", "refused")).isEqualTo(1);
    assertThat(counters.replies("other", "nodata")).isEqualTo(1);
    assertThat(counters.replies("PTR", "answered")).isZero();
  }

  @Test
  void pastMaxStaleAStaleServicesNamesAnswerServfailAndAFreshOneIsUntouched() throws IOException {
    Responder bounded = new Responder(List.of(zone), 1232, java.time.Duration.ofSeconds(30), CLOCK, counters);
    serve("orders", List.of(orders("a", "10.0.0.1", 8080)), CLOCK.instant().minusSeconds(30), null);
    serve("users", List.of(Instance.of("users", "10.0.1.1", 80).id("u")), CLOCK.instant().minusSeconds(29), null);
    serve("pay", List.of(Instance.of("pay", "10.0.2.1", 80).id("p")), null, null);

    for (String[] q : new String[][] {{"_orders._tcp.default.muster.", "SRV"}, {"_orders._tcp.default.muster.", "PTR"},
        {"a._orders._tcp.default.muster.", "SRV"}, {"orders.default.muster.", "A"},
        {"v1.orders.default.muster.", "A"}}) {
      Message query = Message.newQuery(Record.newRecord(Name.fromString(q[0]), Type.value(q[1]), DClass.IN));
      Message m = new Message(bounded.respond(query.toWire(), query.toWire().length, true));
      assertThat(m.getRcode()).as("%s %s", q[0], q[1]).isEqualTo(Rcode.SERVFAIL);
      assertThat(m.getSection(Section.ANSWER)).isEmpty();
    }
    byte[] usersQuery = Message.newQuery(Record.newRecord(Name.fromString("_users._tcp.default.muster."), Type.SRV,
        DClass.IN)).toWire();
    Message users = new Message(bounded.respond(usersQuery, usersQuery.length, true));
    assertThat(users.getRcode()).as("stale for 29 s of 30: still answered").isEqualTo(Rcode.NOERROR);
    assertThat(users.getSection(Section.ANSWER)).hasSize(1);
    assertThat(counters.staleRefused.sum()).isEqualTo(5);
    assertThat(counters.replies("SRV", "servfail")).isEqualTo(2);
    assertThat(data(ask("_orders._tcp.default.muster.", Type.SRV), Section.ANSWER))
        .as("without maxStale the last set is answered for the whole outage").hasSize(1);
  }

  @Test
  void browseServicePtrSrvTxtAndAddressesComeFromTheRoutableInstancesOnly() throws IOException {
    serve("orders", List.of(
        orders("a", "10.0.0.1", 8080).zone("z1").weight(50).tag("canary").meta("team", "pay"),
        orders("b", "10.0.0.2", 8081).version("v2"),
        orders("c", "fd00::3", 8082),
        orders("s", "10.0.0.9", 8080).state(InstanceState.STARTING),
        orders("d", "10.0.0.8", 8080).state(InstanceState.DRAINING),
        orders("h", "orders-h.internal", 9000)), null, null, TxtMetadata.of(List.of("team")));
    serve("users", List.of(Instance.of("users", "10.0.1.1", 80).id("u")), null, null);

    assertThat(data(ask("_services._dns-sd._udp.default.muster.", Type.PTR), Section.ANSWER))
        .containsExactly("_orders._tcp.default.muster.", "_users._tcp.default.muster.");

    Message ptr = ask("_orders._tcp.default.muster.", Type.PTR);
    assertThat(ptr.getHeader().getFlag(Flags.AA)).isTrue();
    assertThat(data(ptr, Section.ANSWER)).containsExactlyInAnyOrder("a._orders._tcp.default.muster.",
        "b._orders._tcp.default.muster.", "c._orders._tcp.default.muster.", "h._orders._tcp.default.muster.");
    assertThat(ptr.getSection(Section.ADDITIONAL)).extracting(Record::getType)
        .contains(Type.SRV, Type.TXT, Type.A, Type.AAAA);

    Message srv = ask("A._ORDERS._tcp.default.muster.", Type.SRV); // DNS names compare without case
    SRVRecord s = (SRVRecord) srv.getSection(Section.ANSWER).get(0);
    assertThat(s.getWeight()).isEqualTo(50);
    assertThat(s.getPort()).isEqualTo(8080);
    assertThat(s.getTarget()).hasToString("a.v1.orders.default.muster.");
    assertThat(srv.getSection(Section.ADDITIONAL)).extracting(Record::getType).contains(Type.TXT, Type.A);

    TXTRecord txt = (TXTRecord) ask("a._orders._tcp.default.muster.", Type.TXT).getSection(Section.ANSWER).get(0);
    assertThat(txt.getStrings()).containsExactly("version=v1", "zone=z1", "weight=50", "canary", "team=pay");

    assertThat(data(ask("a.v1.orders.default.muster.", Type.A), Section.ANSWER)).containsExactly("10.0.0.1");
    assertThat(data(ask("c.v1.orders.default.muster.", Type.AAAA), Section.ANSWER)).containsExactly("fd00:0:0:0:0:0:0:3");
    assertThat(data(ask("orders.default.muster.", Type.A), Section.ANSWER))
        .containsExactlyInAnyOrder("10.0.0.1", "10.0.0.2");
    assertThat(data(ask("v2.orders.default.muster.", Type.A), Section.ANSWER)).containsExactly("10.0.0.2");
    // a host-name address: the SRV target is the name itself, and we hold no A for it
    assertThat(((SRVRecord) ask("h._orders._tcp.default.muster.", Type.SRV).getSection(Section.ANSWER).get(0))
        .getTarget()).hasToString("orders-h.internal.");
    // STARTING and DRAINING instances are nowhere
    assertThat(ask("s._orders._tcp.default.muster.", Type.SRV).getRcode()).isEqualTo(Rcode.NXDOMAIN);
    assertThat(ask("d.v1.orders.default.muster.", Type.A).getRcode()).isEqualTo(Rcode.NXDOMAIN);
  }

  @Test
  void negativeAnswersCarryTheSoaAndNamesOutsideTheZonesAreRefused() throws IOException {
    serve("orders", List.of(orders("a", "10.0.0.1", 8080)), null, null);
    Message nx = ask("nope.default.muster.", Type.A);
    assertThat(nx.getRcode()).isEqualTo(Rcode.NXDOMAIN);
    assertThat(nx.getSection(Section.AUTHORITY)).extracting(Record::getType).containsExactly(Type.SOA);
    assertThat(nx.getSection(Section.AUTHORITY).get(0).getTTL()).isEqualTo(5);

    Message nodata = ask("a._orders._tcp.default.muster.", Type.A); // the name exists, without an A
    assertThat(nodata.getRcode()).isEqualTo(Rcode.NOERROR);
    assertThat(nodata.getSection(Section.ANSWER)).isEmpty();
    assertThat(nodata.getSection(Section.AUTHORITY)).extracting(Record::getType).containsExactly(Type.SOA);
    assertThat(ask("_tcp.default.muster.", Type.PTR).getRcode()).isEqualTo(Rcode.NOERROR); // empty non-terminal

    Message apex = ask("default.muster.", Type.SOA);
    assertThat(apex.getSection(Section.ANSWER)).extracting(Record::getType).containsExactly(Type.SOA);
    assertThat(ask("default.muster.", Type.NS).getSection(Section.ANSWER)).hasSize(1);

    Message outside = ask("example.com.", Type.A);
    assertThat(outside.getRcode()).isEqualTo(Rcode.REFUSED);
    assertThat(outside.getHeader().getFlag(Flags.AA)).isFalse();
    Message chaos = ask(Message.newQuery(Record.newRecord(Name.fromString("default.muster."), Type.TXT,
        DClass.CH)), true);
    assertThat(chaos.getRcode()).isEqualTo(Rcode.REFUSED);
    assertThat(ask("default.muster.", Type.AXFR).getRcode()).isEqualTo(Rcode.REFUSED);
  }

  @Test
  void aStaleCacheIsServedWithTheStaleTtlAndTheStatusRecordSaysSo() throws IOException {
    serve("orders", List.of(orders("a", "10.0.0.1", 8080)), CLOCK.instant().minusSeconds(3), null);
    serve("users", List.of(Instance.of("users", "10.0.1.1", 80).id("u")), null, null);
    assertThat(ask("a._orders._tcp.default.muster.", Type.SRV).getSection(Section.ANSWER).get(0).getTTL()).isZero();
    assertThat(ask("u._users._tcp.default.muster.", Type.SRV).getSection(Section.ANSWER).get(0).getTTL())
        .isEqualTo(5);
    TXTRecord status = (TXTRecord) ask("_muster-status.default.muster.", Type.TXT).getSection(Section.ANSWER).get(0);
    assertThat(status.getTTL()).isZero();
    assertThat(status.getStrings()).contains("revision=42", "stale=true", "stale_for_ms=3000", "services=2",
        "service=orders revision=42 stale=true instances=1", "service=users revision=42 stale=false instances=1");
  }

  @Test
  void zonePreferenceSetsSrvPriorityAndLongTxtStringsAreLeftOut() throws IOException {
    serve("orders", List.of(orders("a", "10.0.0.1", 8080).zone("z1").meta("big", "x".repeat(300)),
        orders("b", "10.0.0.2", 8080).zone("z2")), null, "z1", TxtMetadata.ALL);
    assertThat(((SRVRecord) ask("a._orders._tcp.default.muster.", Type.SRV).getSection(Section.ANSWER).get(0))
        .getPriority()).isZero();
    assertThat(((SRVRecord) ask("b._orders._tcp.default.muster.", Type.SRV).getSection(Section.ANSWER).get(0))
        .getPriority()).isEqualTo(ServiceRecords.OTHER_ZONE_PRIORITY);
    TXTRecord txt = (TXTRecord) ask("a._orders._tcp.default.muster.", Type.TXT).getSection(Section.ANSWER).get(0);
    assertThat(txt.getStrings()).containsExactly("version=v1", "zone=z1", "weight=100");
  }

  @Test
  void anIdSharedByTwoVersionsGetsTheVersionInItsLabel() throws IOException {
    serve("orders", List.of(orders("a", "10.0.0.1", 8080), orders("a", "10.0.0.2", 8080).version("v2")), null,
        null);
    assertThat(data(ask("_orders._tcp.default.muster.", Type.PTR), Section.ANSWER))
        .containsExactlyInAnyOrder("a-v1._orders._tcp.default.muster.", "a-v2._orders._tcp.default.muster.");
  }

  @Test
  void anAnswerTooBigForUdpIsTruncatedAndWholeOverTcp() throws IOException {
    List<Instance> many = new ArrayList<>();
    for (int i = 0; i < 200; i++) {
      many.add(orders("i" + i, "10.0." + (i / 250) + "." + (i % 250 + 1), 8080));
    }
    serve("orders", many, null, null);
    serve("small", many.subList(0, 40).stream().map(i -> Instance.of("small", i.address(), 80).id(i.id())).toList(),
        null, null);
    Message query = Message.newQuery(Record.newRecord(Name.fromString("_orders._tcp.default.muster."), Type.PTR,
        DClass.IN));
    Message udp = ask(query, true);
    assertThat(udp.getHeader().getFlag(Flags.TC)).isTrue();
    assertThat(udp.getSection(Section.ANSWER)).isEmpty(); // whole RRsets only: the 200 PTRs go, the client asks TCP
    query.addRecord(new OPTRecord(4096, 0, 0), Section.ADDITIONAL);
    Message tcp = ask(query, false);
    assertThat(tcp.getHeader().getFlag(Flags.TC)).isFalse();
    assertThat(tcp.getSection(Section.ANSWER)).hasSize(200);
    assertThat(tcp.getSection(Section.ADDITIONAL)).hasSize(601); // SRV, TXT and A of each, and the OPT

    // 40 PTRs: more than 512 bytes, less than 1232
    Message small = Message.newQuery(Record.newRecord(Name.fromString("_small._tcp.default.muster."), Type.PTR,
        DClass.IN));
    byte[] plain = responder.respond(small.toWire(), small.toWire().length, true);
    assertThat(plain.length).isLessThanOrEqualTo(512);
    assertThat(new Message(plain).getHeader().getFlag(Flags.TC)).isTrue();
    small.addRecord(new OPTRecord(4096, 0, 0), Section.ADDITIONAL); // 4096 asked: capped at 1232
    byte[] edns = responder.respond(small.toWire(), small.toWire().length, true);
    Message fits = new Message(edns);
    assertThat(edns.length).isLessThanOrEqualTo(1232).isGreaterThan(512);
    assertThat(fits.getHeader().getFlag(Flags.TC)).as("dropping Additional records is no truncation").isFalse();
    assertThat(fits.getSection(Section.ANSWER)).hasSize(40);
    assertThat(fits.getSection(Section.ADDITIONAL).size()).isLessThan(121);
    assertThat(counters.truncated.sum()).isEqualTo(2);
  }

  @Test
  void srvAtTheServiceNameIsEveryRoutableInstancesSrvWithTheTargetsAddressesInAdditional() throws IOException {
    serve("orders", List.of(
        orders("a", "10.0.0.1", 8080).zone("z1").weight(50),
        orders("b", "10.0.0.2", 8081).version("v2").zone("z2"),
        orders("c", "fd00::3", 8082).zone("z1"),
        orders("s", "10.0.0.9", 8080).state(InstanceState.STARTING),
        orders("d", "10.0.0.8", 8080).state(InstanceState.DRAINING),
        orders("h", "orders-h.internal", 9000).zone("z1"),
        orders("h2", "orders-h.internal", 9000).zone("z1")), null, "z1"); // h2's SRV would repeat h's

    Message srv = ask("_ORDERS._tcp.default.muster.", Type.SRV); // RFC 2782's name, the DNS-SD PTR's owner
    assertThat(srv.getRcode()).isEqualTo(Rcode.NOERROR);
    assertThat(srv.getHeader().getFlag(Flags.AA)).isTrue();
    assertThat(srv.getHeader().getFlag(Flags.TC)).isFalse();
    assertThat(srv.getSection(Section.ANSWER)).allSatisfy(r -> {
      assertThat(r.getType()).isEqualTo(Type.SRV);
      assertThat(r.getName()).isEqualTo(Name.fromConstantString("_orders._tcp.default.muster.")); // any case
      assertThat(r.getTTL()).isEqualTo(5);
    });
    // priority (by --zone), weight, port and target: what each instance's own SRV says
    assertThat(data(srv, Section.ANSWER)).containsExactlyInAnyOrder(
        "0 50 8080 a.v1.orders.default.muster.",
        "10 100 8081 b.v2.orders.default.muster.",
        "0 100 8082 c.v1.orders.default.muster.",
        "0 100 9000 orders-h.internal.");
    for (String label : List.of("a", "b", "c", "h")) {
      assertThat(data(srv, Section.ANSWER)).contains(
          data(ask(label + "._orders._tcp.default.muster.", Type.SRV), Section.ANSWER).get(0));
    }
    // Additional: the targets' A and AAAA only (a host-name target has none from us), no TXT
    List<Record> additional = srv.getSection(Section.ADDITIONAL).stream().filter(r -> r.getType() != Type.OPT)
        .toList();
    assertThat(additional).extracting(r -> r.getName() + " " + Type.string(r.getType()) + " " + r.rdataToString())
        .containsExactlyInAnyOrder("a.v1.orders.default.muster. A 10.0.0.1", "b.v2.orders.default.muster. A 10.0.0.2",
            "c.v1.orders.default.muster. AAAA fd00:0:0:0:0:0:0:3");

    // the PTR answer is as it was: PTRs only, each instance's SRV, TXT and address in Additional (over TCP, where
    // nothing of Additional is left out)
    Message ptr = ask(Message.newQuery(Record.newRecord(Name.fromString("_orders._tcp.default.muster."), Type.PTR,
        DClass.IN)), false);
    assertThat(ptr.getSection(Section.ANSWER)).extracting(Record::getType).containsOnly(Type.PTR).hasSize(5);
    assertThat(ptr.getSection(Section.ADDITIONAL)).filteredOn(r -> r.getType() == Type.SRV)
        .allSatisfy(r -> assertThat(r.getName().getLabelString(0)).isNotEqualTo("_orders")).hasSize(5);
    // ANY: RFC 8482's one HINFO (issue 35), not the PTR and SRV sets
    Message any = ask("_orders._tcp.default.muster.", Type.ANY);
    assertThat(any.getSection(Section.ANSWER)).extracting(Record::getType).containsExactly(Type.HINFO);
    // the other types at the name: NODATA with the SOA, as before
    Message txt = ask("_orders._tcp.default.muster.", Type.TXT);
    assertThat(txt.getRcode()).isEqualTo(Rcode.NOERROR);
    assertThat(txt.getSection(Section.ANSWER)).isEmpty();
    assertThat(txt.getSection(Section.AUTHORITY)).extracting(Record::getType).containsExactly(Type.SOA);
  }

  @Test
  void srvAtTheNameOfAServiceWithoutRoutableInstancesIsNodataAndOfNoServiceNxdomain() throws IOException {
    serve("idle", List.of(Instance.of("idle", "10.0.2.1", 80).id("i1").state(InstanceState.STARTING),
        Instance.of("idle", "10.0.2.2", 80).id("i2").state(InstanceState.DRAINING)), null, null);
    for (int type : new int[] {Type.SRV, Type.PTR}) {
      Message nodata = ask("_idle._tcp.default.muster.", type);
      assertThat(nodata.getRcode()).as(Type.string(type)).isEqualTo(Rcode.NOERROR);
      assertThat(nodata.getSection(Section.ANSWER)).isEmpty();
      assertThat(data(nodata, Section.ADDITIONAL)).isEmpty();
      assertThat(nodata.getSection(Section.AUTHORITY)).extracting(Record::getType).containsExactly(Type.SOA);
    }
    Message nx = ask("_nope._tcp.default.muster.", Type.SRV);
    assertThat(nx.getRcode()).isEqualTo(Rcode.NXDOMAIN);
    assertThat(nx.getSection(Section.AUTHORITY)).extracting(Record::getType).containsExactly(Type.SOA);
  }

  @Test
  void aStaleServiceGetsTheStaleTtlOnItsServiceSrvToo() throws IOException {
    serve("orders", List.of(orders("a", "10.0.0.1", 8080)), CLOCK.instant().minusSeconds(3), null);
    Message srv = ask("_orders._tcp.default.muster.", Type.SRV);
    assertThat(srv.getSection(Section.ANSWER)).singleElement().extracting(Record::getTTL).isEqualTo(0L);
    assertThat(srv.getSection(Section.ADDITIONAL)).filteredOn(r -> r.getType() == Type.A).singleElement()
        .extracting(Record::getTTL).isEqualTo(0L);
  }

  @Test
  void aLargeServiceSrvSetIsTruncatedByWholeRrsetsOverUdpAndWholeOverTcp() throws IOException {
    List<Instance> many = new ArrayList<>();
    for (int i = 0; i < 200; i++) {
      many.add(orders("i" + i, "10.0." + (i / 250) + "." + (i % 250 + 1), 8000 + i));
    }
    serve("orders", many, null, null);
    serve("small", many.subList(0, 20).stream().map(i -> Instance.of("small", i.address(), i.port()).id(i.id()))
        .toList(), null, null);

    Message query = Message.newQuery(Record.newRecord(Name.fromString("_orders._tcp.default.muster."), Type.SRV,
        DClass.IN));
    query.addRecord(new OPTRecord(4096, 0, 0), Section.ADDITIONAL);
    byte[] udp = responder.respond(query.toWire(), query.toWire().length, true);
    assertThat(udp.length).isLessThanOrEqualTo(1232);
    Message truncated = new Message(udp); // parses: nothing cut mid-record
    assertThat(truncated.getHeader().getFlag(Flags.TC)).isTrue();
    assertThat(truncated.getSection(Section.ANSWER)).isEmpty(); // 200 SRVs are one RRset: all or none
    Message tcp = ask(query, false);
    assertThat(tcp.getHeader().getFlag(Flags.TC)).isFalse();
    assertThat(tcp.getSection(Section.ANSWER)).hasSize(200);
    assertThat(data(tcp, Section.ANSWER)).contains("0 100 8199 i199.v1.orders.default.muster.");
    assertThat(tcp.getSection(Section.ADDITIONAL)).extracting(Record::getType).containsOnly(Type.A, Type.OPT)
        .hasSize(201);

    // 20 SRVs: more than 512 bytes, less than 1232 with their addresses dropped
    Message small = Message.newQuery(Record.newRecord(Name.fromString("_small._tcp.default.muster."), Type.SRV,
        DClass.IN));
    byte[] plain = responder.respond(small.toWire(), small.toWire().length, true);
    assertThat(plain.length).isLessThanOrEqualTo(512);
    assertThat(new Message(plain).getHeader().getFlag(Flags.TC)).isTrue();
    assertThat(new Message(plain).getSection(Section.ANSWER)).isEmpty();
    small.addRecord(new OPTRecord(4096, 0, 0), Section.ADDITIONAL);
    byte[] edns = responder.respond(small.toWire(), small.toWire().length, true);
    Message fits = new Message(edns);
    assertThat(edns.length).isLessThanOrEqualTo(1232).isGreaterThan(512);
    assertThat(fits.getHeader().getFlag(Flags.TC)).as("dropping Additional records is no truncation").isFalse();
    assertThat(fits.getSection(Section.ANSWER)).hasSize(20);
    List<Record> addresses = fits.getSection(Section.ADDITIONAL).stream().filter(r -> r.getType() == Type.A).toList();
    assertThat(addresses.size()).isBetween(1, 19); // some whole A records, the rest dropped
    List<String> targets = fits.getSection(Section.ANSWER).stream().map(r -> ((SRVRecord) r).getTarget().toString())
        .toList();
    assertThat(addresses).allSatisfy(a -> assertThat(targets).contains(a.getName().toString()));
    assertThat(counters.truncated.sum()).isEqualTo(2);
    assertThat(counters.errors.sum()).isZero();
  }

  @Test
  void badPacketsGetFormerrNotimpOrNothingAndNeverAnError() throws IOException {
    serve("orders", List.of(orders("a", "10.0.0.1", 8080)), null, null);
    byte[] good = Message.newQuery(Record.newRecord(Name.fromString("a._orders._tcp.default.muster."), Type.SRV,
        DClass.IN)).toWire();
    assertThat(responder.respond(good, 11, true)).as("shorter than a header").isNull();
    byte[] response = good.clone();
    response[2] |= (byte) 0x80; // QR: a response, never answered
    assertThat(responder.respond(response, response.length, true)).isNull();
    assertThat(new Message(responder.respond(good, good.length - 3, true)).getRcode()).isEqualTo(Rcode.FORMERR);
    byte[] oversized = java.util.Arrays.copyOf(good, Responder.MAX_QUERY + 1); // a real query is < 300 bytes
    assertThat(new Message(responder.respond(oversized, oversized.length, true)).getRcode())
        .isEqualTo(Rcode.FORMERR);
    byte[] twoQuestions = good.clone();
    twoQuestions[5] = 2;
    assertThat(new Message(responder.respond(twoQuestions, twoQuestions.length, true)).getRcode())
        .isEqualTo(Rcode.FORMERR);
    Message update = Message.newQuery(Record.newRecord(Name.fromString("default.muster."), Type.SOA, DClass.IN));
    update.getHeader().setOpcode(Opcode.UPDATE);
    assertThat(ask(update, true).getRcode()).isEqualTo(Rcode.NOTIMP);
    Message badvers = Message.newQuery(Record.newRecord(Name.fromString("default.muster."), Type.SOA, DClass.IN));
    badvers.addRecord(new OPTRecord(1232, 0, 1), Section.ADDITIONAL);
    assertThat(ask(badvers, true).getRcode()).isEqualTo(Rcode.BADVERS);
    // a compression pointer to itself, where the question's name starts
    byte[] loop = java.util.Arrays.copyOf(good, 18);
    loop[12] = (byte) 0xC0;
    loop[13] = 12;
    assertThat(new Message(responder.respond(loop, loop.length, true)).getRcode()).isEqualTo(Rcode.FORMERR);
    fuzz(good, new Random(17), 20_000);
    assertThat(counters.errors.sum()).as("exceptions inside the responder").isZero();
    assertThat(ask("a._orders._tcp.default.muster.", Type.SRV).getSection(Section.ANSWER)).hasSize(1);
  }

  /** Bad packets of every kind ({@link BadPackets}); none may throw or count an error. */
  private void fuzz(byte[] good, Random random, int n) {
    for (int i = 0; i < n; i++) {
      byte[] p = BadPackets.mutate(good, random, i);
      responder.respond(p, p.length, random.nextBoolean());
    }
  }

  @Test
  void aRemovedServiceIsGoneAndItsLateUpdatesAreIgnored() throws IOException {
    NamespaceZone.Feed feed = new NamespaceZone.Feed("orders");
    zone.put(feed, ServiceRecords.build("orders", zone.origin(), EndpointSet.of(1,
        List.of(orders("a", "10.0.0.1", 8080))), null, 5, null, TxtMetadata.NONE));
    assertThat(ask("orders.default.muster.", Type.A).getRcode()).isEqualTo(Rcode.NOERROR);
    zone.remove(feed);
    zone.put(feed, ServiceRecords.build("orders", zone.origin(), EndpointSet.of(2,
        List.of(orders("a", "10.0.0.1", 8080))), null, 5, null, TxtMetadata.NONE));
    assertThat(ask("orders.default.muster.", Type.A).getRcode()).isEqualTo(Rcode.NXDOMAIN);
    assertThat(zone.serviceNames()).isEmpty();
  }

  @Test
  void whatOneQueryAllocatesDoesNotGrowWithTheInstancesOfItsService() throws IOException {
    List<Instance> many = new ArrayList<>();
    for (int i = 0; i < 10_000; i++) {
      many.add(Instance.of("big", "10." + (i / 62_500) + "." + (i / 250 % 250) + "." + (i % 250 + 1), 8080)
          .id("b" + i));
    }
    serve("big", many, null, null);
    serve("tiny", many.subList(0, 10).stream().map(i -> Instance.of("tiny", i.address(), 80).id(i.id())).toList(),
        null, null);
    long big = allocatedPerQuery("b7._big._tcp.default.muster.");
    long tiny = allocatedPerQuery("b7._tiny._tcp.default.muster.");
    System.out.printf("dns: one SRV query allocates %d B at 10 instances, %d B at 10,000%n", tiny, big);
    assertThat(big).as("bytes per SRV query at 10,000 instances vs %d at 10", tiny).isLessThan(tiny * 3 / 2 + 256);
  }

  private long allocatedPerQuery(String name) throws IOException {
    com.sun.management.ThreadMXBean threads =
        (com.sun.management.ThreadMXBean) java.lang.management.ManagementFactory.getThreadMXBean();
    Message query = Message.newQuery(Record.newRecord(Name.fromString(name), Type.SRV, DClass.IN));
    query.addRecord(new OPTRecord(1232, 0, 0), Section.ADDITIONAL);
    byte[] wire = query.toWire();
    for (int i = 0; i < 20_000; i++) { // warm up: the JIT's escape analysis changes what is allocated
      responder.respond(wire, wire.length, true);
    }
    int n = 20_000;
    long before = threads.getCurrentThreadAllocatedBytes();
    for (int i = 0; i < n; i++) {
      responder.respond(wire, wire.length, true);
    }
    return (threads.getCurrentThreadAllocatedBytes() - before) / n;
  }
}
