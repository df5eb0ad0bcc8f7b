package dev.muster.dns.internal;

import static org.assertj.core.api.Assertions.assertThat;

import dev.muster.cache.EndpointSet;
import dev.muster.registry.Instance;
import java.io.IOException;
import java.time.Clock;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.xbill.DNS.DClass;
import org.xbill.DNS.Flags;
import org.xbill.DNS.Message;
import org.xbill.DNS.Name;
import org.xbill.DNS.OPTRecord;
import org.xbill.DNS.Record;
import org.xbill.DNS.Section;
import org.xbill.DNS.Type;

/**
 * An answer that cannot fit a UDP reply is not rendered ({@link Responder#surelyTruncated}): its bytes must be those
 * dnsjava's own truncation makes of the whole answer. The reference is the TCP reply (never truncated) rendered again
 * by dnsjava at the UDP limit.
 */
class TruncationTest {
  private static final int[] SIZES = {1, 2, 10, 20, 30, 40, 50, 60, 70, 75, 80, 85, 90, 95, 99, 100, 101, 150};

  private final NamespaceZone zone = new NamespaceZone("bench", Name.fromString("muster."), 5, 0,
      Clock.systemUTC());
  private final DnsCounters counters = new DnsCounters();
  private final Responder responder;

  TruncationTest() throws Exception {
    int address = 0;
    for (int n : SIZES) {
      String service = "svc-" + n;
      List<Instance> instances = new ArrayList<>();
      for (int j = 0; j < n; j++, address++) {
        instances.add(Instance.of(service, "10." + (address >> 16 & 0xff) + "." + (address >> 8 & 0xff) + "."
            + (address & 0xff), 8080).id("i" + j).namespace("bench").version(j % 3 == 0 ? "v2" : "v1")
            .zone("zone-a").tag("http").meta("team", "payments").meta("commit", "4f9c2e1a7b3d"));
      }
      zone.put(new NamespaceZone.Feed(service), ServiceRecords.build(service, zone.origin(),
          EndpointSet.of(1, instances), null, 5, null, TxtMetadata.ALL));
    }
    responder = new Responder(List.of(zone), 1232, Clock.systemUTC(), counters);
  }

  @Test
  void everyUdpReplyIsWhatDnsjavaMakesOfTheWholeAnswer() throws IOException {
    int truncated = 0;
    for (int n : SIZES) {
      for (String[] q : List.of(new String[] {"_svc-" + n + "._tcp.bench.muster.", "PTR"},
          new String[] {"_SVC-" + n + "._tcp.Bench.Muster.", "PTR"}, new String[] {"_svc-" + n + "._tcp.bench.muster.", "ANY"},
          new String[] {"_svc-" + n + "._tcp.bench.muster.", "SRV"}, new String[] {"_SVC-" + n + "._TCP.bench.muster.", "SRV"},
          new String[] {"svc-" + n + ".bench.muster.", "A"}, new String[] {"svc-" + n + ".bench.muster.", "ANY"},
          new String[] {"v1.svc-" + n + ".bench.muster.", "A"},
          new String[] {"i0._svc-" + n + "._tcp.bench.muster.", "SRV"})) {
        for (boolean edns : new boolean[] {true, false}) {
          byte[] query = query(q[0], Type.value(q[1]), edns);
          byte[] udp = responder.respond(query, query.length, true);
          byte[] tcp = responder.respond(query, query.length, false);
          byte[] reference = new Message(tcp).toWire(edns ? 1232 : 512);
          assertThat(udp).as("%s %s, %d instances, edns %s", q[0], q[1], n, edns).isEqualTo(reference);
          if (new Message(udp).getHeader().getFlag(Flags.TC)) {
            truncated++;
          }
        }
      }
    }
    assertThat(truncated).as("answers that did not fit").isGreaterThan(20);
    assertThat(counters.truncated.sum()).isEqualTo(truncated);
    assertThat(counters.errors.sum()).isZero();
  }

  @Test
  void aHundredInstancePtrGoesOutEmptyWithTc() throws IOException {
    byte[] query = query("_svc-100._tcp.bench.muster.", Type.PTR, true);
    Message reply = new Message(responder.respond(query, query.length, true));
    assertThat(reply.getHeader().getFlag(Flags.TC)).isTrue();
    assertThat(reply.getHeader().getFlag(Flags.AA)).isTrue();
    assertThat(reply.getSection(Section.ANSWER)).isEmpty();
    assertThat(reply.getSection(Section.ADDITIONAL)).singleElement().isInstanceOf(OPTRecord.class);
    assertThat(counters.answered.sum()).isEqualTo(1);
  }

  @Test
  void onlyOneRrsetTooLargeForTheRoomIsSurelyTruncated() throws Exception {
    Name owner = Name.fromString("svc.bench.muster.");
    List<Record> a = new ArrayList<>();
    for (int i = 0; i < 10; i++) {
      a.add(Record.fromString(owner, Type.A, DClass.IN, 5, "10.0.0." + i, Name.root));
    }
    assertThat(Responder.surelyTruncated(a, Type.A, 159)).isTrue(); // 10 x (2 + 10 + 4) = 160 bytes at least
    assertThat(Responder.surelyTruncated(a, Type.A, 160)).isFalse();
    assertThat(Responder.surelyTruncated(a, Type.AAAA, 0)).isFalse(); // nothing answers: NODATA, not TC
    List<Record> two = new ArrayList<>(a);
    two.add(Record.fromString(owner, Type.TXT, DClass.IN, 5, "x", Name.root));
    assertThat(Responder.surelyTruncated(two, Type.ANY, 0)).isFalse(); // two RRsets: dnsjava may keep the A
    // an SRV's target is written whole (never compressed): 2 + 10 + 6 + 24 bytes each for this target
    Name target = Name.fromString("i0.v1.svc.bench.muster."); // 24 bytes on the wire
    List<Record> srv = new ArrayList<>();
    for (int i = 0; i < 10; i++) {
      srv.add(Record.fromString(Name.fromString("_svc._tcp.bench.muster."), Type.SRV, DClass.IN, 5,
          "0 100 " + (8000 + i) + " " + target, Name.root));
    }
    assertThat((int) target.length()).isEqualTo(24);
    assertThat(Responder.surelyTruncated(srv, Type.SRV, 419)).isTrue(); // 10 x (2 + 10 + 6 + 24) = 420 at least
    assertThat(Responder.surelyTruncated(srv, Type.SRV, 420)).isFalse();
  }

  private static byte[] query(String name, int type, boolean edns) throws IOException {
    Message m = Message.newQuery(Record.newRecord(Name.fromString(name), type, DClass.IN));
    if (edns) {
      m.addRecord(new OPTRecord(4096, 0, 0), Section.ADDITIONAL);
    }
    return m.toWire();
  }
}
