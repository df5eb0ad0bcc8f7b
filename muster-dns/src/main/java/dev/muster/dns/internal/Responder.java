package dev.muster.dns.internal;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.time.Clock;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.TreeMap;
import org.xbill.DNS.DClass;
import org.xbill.DNS.Flags;
import org.xbill.DNS.HINFORecord;
import org.xbill.DNS.Header;
import org.xbill.DNS.Message;
import org.xbill.DNS.Name;
import org.xbill.DNS.OPTRecord;
import org.xbill.DNS.Opcode;
import org.xbill.DNS.PTRRecord;
import org.xbill.DNS.Rcode;
import org.xbill.DNS.Record;
import org.xbill.DNS.SRVRecord;
import org.xbill.DNS.Section;
import org.xbill.DNS.Type;

/**
 * Turns one query's bytes into the reply's bytes, or into nothing (a packet to drop). Stateless apart from the
 * zones it reads and its counters; safe for any number of threads, takes no lock, and never throws: whatever a
 * packet holds, the worst outcome is a dropped packet and a counted error.
 *
 * <p>Rules (docs/design-dns.md, "Protocol hygiene"): shorter than a header or a response (QR set): dropped. A header
 * that parses with a body that does not: FORMERR. Opcode other than QUERY: NOTIMP. Not exactly one question:
 * FORMERR. EDNS version other than 0: BADVERS. Class other than IN or ANY, a name in no zone served, or a source
 * outside {@code --allow-from}: REFUSED. Zone transfers: REFUSED. ANY: one {@code HINFO "RFC8482" ""} (RFC 8482 §4.2),
 * unless built with {@code minimalAny} false.
 */
public final class Responder {
  /** The largest query accepted; a real one is well under 300 bytes. */
  public static final int MAX_QUERY = 4096;
  private static final int NO_EDNS_PAYLOAD = 512;
  private static final int TCP_MAX = 65_535;

  private final List<NamespaceZone> zones;
  private final int maxUdpPayload;
  private final int optLength; // the wire size of the OPT record of an EDNS0 reply
  private final Clock clock;
  private final DnsCounters counters;
  private final java.time.Duration maxStale; // null: a stale service is answered for the whole outage
  private final boolean minimalAny;

  public Responder(List<NamespaceZone> zones, int maxUdpPayload, Clock clock, DnsCounters counters) {
    this(zones, maxUdpPayload, null, true, clock, counters);
  }

  public Responder(List<NamespaceZone> zones, int maxUdpPayload, java.time.Duration maxStale, Clock clock,
      DnsCounters counters) {
    this(zones, maxUdpPayload, maxStale, true, clock, counters);
  }

  /**
   * As above; {@code maxStale} (null: none) bounds how long a stale service is answered: past it, its names answer
   * SERVFAIL (FAIL_CLOSED; a resolver then fails or asks another server, where an answer would send clients to a set
   * nobody has confirmed for that long); {@code minimalAny} false answers ANY with every record at the name.
   */
  public Responder(List<NamespaceZone> zones, int maxUdpPayload, java.time.Duration maxStale, boolean minimalAny,
      Clock clock, DnsCounters counters) {
    this.minimalAny = minimalAny;
    this.zones = List.copyOf(zones);
    this.maxUdpPayload = maxUdpPayload;
    this.optLength = new OPTRecord(maxUdpPayload, 0, 0).toWire(Section.ADDITIONAL).length;
    this.clock = clock;
    this.maxStale = maxStale;
    this.counters = counters;
  }

  /** The reply to {@code length} bytes of {@code packet}, or null to send nothing. */
  public byte[] respond(byte[] packet, int length, boolean udp) {
    return respond(packet, length, udp, true);
  }

  /** As above; {@code allowed} false (a source outside {@code --allow-from}) refuses every question. */
  public byte[] respond(byte[] packet, int length, boolean udp, boolean allowed) {
    counters.queries.increment();
    try {
      return respondOrThrow(packet, length, udp, allowed);
    } catch (RuntimeException | IOException e) {
      counters.errors.increment(); // a bug of ours, never the sender's fault: counted (tests assert it stays 0)
      return null;
    }
  }

  private byte[] respondOrThrow(byte[] packet, int length, boolean udp, boolean allowed) throws IOException {
    if (length < Header.LENGTH) {
      counters.dropped.increment();
      return null;
    }
    byte[] bytes = length == packet.length ? packet : java.util.Arrays.copyOf(packet, length);
    Header header = new Header(bytes);
    if (header.getFlag(Flags.QR)) {
      counters.dropped.increment(); // a response: answering it could start a loop between two servers
      return null;
    }
    if (length > MAX_QUERY) {
      return error(header, null, Rcode.FORMERR, udp);
    }
    Message query;
    try {
      query = new Message(bytes);
    } catch (IOException | RuntimeException e) {
      return error(header, null, Rcode.FORMERR, udp); // truncated, wrong counts, a compression loop, bad rdata
    }
    Record question = query.getQuestion();
    if (header.getOpcode() != Opcode.QUERY) {
      return error(header, question, Rcode.NOTIMP, udp);
    }
    if (header.getCount(Section.QUESTION) != 1) {
      return error(header, question, Rcode.FORMERR, udp);
    }
    OPTRecord opt = query.getOPT();
    int limit = !udp ? TCP_MAX : opt == null ? NO_EDNS_PAYLOAD
        : Math.max(NO_EDNS_PAYLOAD, Math.min(opt.getPayloadSize(), maxUdpPayload));
    Message reply = reply(header, question);
    if (opt != null) {
      if (opt.getVersion() != 0) {
        counters.formerr.increment();
        reply.getHeader().setRcode(Rcode.BADVERS & 0xF);
        reply.addRecord(new OPTRecord(maxUdpPayload, Rcode.BADVERS >>> 4, 0), Section.ADDITIONAL);
        return reply.toWire(limit);
      }
      reply.addRecord(new OPTRecord(maxUdpPayload, 0, 0), Section.ADDITIONAL);
    }
    // what the answer section can fill: dnsjava writes the header and the question before it, and keeps room for the
    // OPT record, which it writes last
    int room = limit - Header.LENGTH - question.getName().length() - 4 - (opt == null ? 0 : optLength);
    if (allowed) {
      answer(question, reply, room);
    } else {
      counters.notAllowed.increment();
      refuse(reply.getHeader());
    }
    counters.replied(question.getType(), reply.getHeader().getRcode(), reply.getHeader().getCount(Section.ANSWER) > 0);
    byte[] wire = reply.toWire(limit);
    if ((wire[2] & 0x02) != 0) {
      counters.truncated.increment();
    }
    return wire;
  }

  /**
   * An empty TC reply, what a source over its rate limit gets now and then (RRL's slip) so that a real client asks
   * again over TCP: the query's header and question (the client matches a reply by both) with QR and TC set and no
   * other section, so never larger than the query. A query whose question cannot be read gets the header alone; a
   * response (QR set) gets nothing. Built from the bytes, without parsing the message.
   */
  public byte[] truncatedReply(byte[] packet, int length) {
    if (length < Header.LENGTH || (packet[2] & 0x80) != 0) {
      return null;
    }
    int end = ResponseRateLimiter.questionEnd(packet, length);
    byte[] out = java.util.Arrays.copyOf(packet, end < 0 ? Header.LENGTH : end);
    out[2] = (byte) (0x80 | (packet[2] & 0x79)); // QR, the opcode and RD kept, AA cleared, TC set below
    out[2] |= 0x02;
    out[3] = 0; // RA, Z, AD, CD and RCODE (NOERROR)
    out[4] = 0;
    out[5] = (byte) (end < 0 ? 0 : 1);
    for (int i = 6; i < Header.LENGTH; i++) {
      out[i] = 0; // no answer, authority or additional record
    }
    return out;
  }

  private Message reply(Header queryHeader, Record question) {
    Header h = new Header(queryHeader.getID());
    h.setFlag(Flags.QR);
    if (queryHeader.getFlag(Flags.RD)) {
      h.setFlag(Flags.RD);
    }
    h.setOpcode(queryHeader.getOpcode());
    Message reply = new Message();
    reply.setHeader(h);
    if (question != null) {
      reply.addRecord(question, Section.QUESTION);
    }
    return reply;
  }

  private byte[] error(Header header, Record question, int rcode, boolean udp) {
    (rcode == Rcode.NOTIMP ? counters.notimp : counters.formerr).increment();
    counters.replied(question == null ? -1 : question.getType(), rcode, false);
    Message reply = reply(header, question);
    reply.getHeader().setRcode(rcode);
    return reply.toWire(udp ? NO_EDNS_PAYLOAD : TCP_MAX);
  }

  private void answer(Record question, Message reply, int room) {
    Name qname = question.getName();
    int qclass = question.getDClass();
    int qtype = question.getType();
    Header h = reply.getHeader();
    if (qclass != DClass.IN && qclass != DClass.ANY) {
      refuse(h);
      return;
    }
    NamespaceZone zone = null;
    for (NamespaceZone z : zones) {
      if (qname.subdomain(z.origin())) {
        zone = z;
        break;
      }
    }
    if (zone == null || qtype == Type.AXFR || qtype == Type.IXFR) {
      refuse(h); // not ours (we are no recursive resolver), or a zone transfer (not offered)
      return;
    }
    h.setFlag(Flags.AA);
    NamespaceZone.View view = zone.view();
    Node node = lookup(view, zone, qname, qtype);
    if (node == Node.SERVFAIL) {
      h.setRcode(Rcode.SERVFAIL);
      counters.staleRefused.increment();
      return;
    }
    if (node == null) {
      h.setRcode(Rcode.NXDOMAIN);
      counters.nxdomain.increment();
      reply.addRecord(view.soa(), Section.AUTHORITY);
      return;
    }
    if (qtype == Type.ANY && minimalAny) {
      if (node.records.isEmpty()) {
        counters.nodata.increment();
        reply.addRecord(view.soa(), Section.AUTHORITY);
      } else {
        // RFC 8482 §4.2: one synthesized HINFO instead of every record at the name, so that an ANY query, the
        // favourite of reflection attacks, gets a reply barely larger than itself
        reply.addRecord(new HINFORecord(qname, DClass.IN, node.records.get(0).getTTL(), "RFC8482", ""),
            Section.ANSWER);
        counters.answered.increment();
        counters.minimalAny.increment();
      }
      return;
    }
    if (surelyTruncated(node.records, qtype, room)) {
      // dnsjava would render records until past the limit, then drop the whole RRset and set TC: the same bytes
      // without adding (and rendering) the records, e.g. a 100-instance PTR with 300 records in Additional
      h.setFlag(Flags.TC);
      counters.answered.increment();
      return;
    }
    int answers = 0;
    for (Record r : node.records) {
      if (qtype == Type.ANY || r.getType() == qtype) {
        reply.addRecord(r, Section.ANSWER);
        answers++;
      }
    }
    if (answers == 0) {
      counters.nodata.increment();
      reply.addRecord(view.soa(), Section.AUTHORITY);
      return;
    }
    counters.answered.increment();
    if (qtype == Type.PTR || qtype == Type.SRV || qtype == Type.ANY) {
      for (Record r : node.additional) {
        reply.addRecord(r, Section.ADDITIONAL);
      }
    }
  }

  /**
   * Whether the records of {@code records} that answer {@code qtype} form one RRset that cannot fit in {@code room}
   * bytes however well it compresses: each record takes at least its owner (a 2-byte pointer; 1 byte for the root),
   * 10 bytes of type, class, TTL and length, and its smallest rdata (A 4 bytes, AAAA 16, a PTR's target 2, an SRV's 6
   * bytes and its target, which is never compressed: RFC 2782, and dnsjava writes it whole). dnsjava renders an RRset
   * whole or not at all, so such an answer goes out empty with TC, Authority and Additional empty.
   */
  static boolean surelyTruncated(List<Record> records, int qtype, int room) {
    Record first = null;
    int atLeast = 0;
    for (Record r : records) {
      if (qtype != Type.ANY && r.getType() != qtype) {
        continue;
      }
      if (first == null) {
        first = r;
      } else if (!r.sameRRset(first)) {
        return false; // several RRsets: dnsjava may keep the first ones whole
      }
      atLeast += wireSize(r.getName()) + 10 + switch (r.getType()) {
        case Type.A -> 4;
        case Type.AAAA -> 16;
        case Type.PTR -> wireSize(((PTRRecord) r).getTarget());
        case Type.SRV -> 6 + ((SRVRecord) r).getTarget().length();
        default -> 0;
      };
      if (atLeast > room && qtype != Type.ANY) {
        // the records of one type at one name are one RRset: no need to walk the rest (a PTR question at a
        // service's name stops here, before the SRV records that follow the PTRs)
        return true;
      }
    }
    return first != null && atLeast > room;
  }

  /** The fewest bytes a name takes in a message: a compression pointer, or the root's one byte. */
  private static int wireSize(Name name) {
    return name.labels() == 1 ? 1 : 2;
  }

  private void refuse(Header h) {
    h.setRcode(Rcode.REFUSED);
    counters.refused.increment();
  }

  /** What is at one name: its records (all types) and, for PTR, SRV and ANY answers, the additional ones. */
  record Node(List<Record> records, List<Record> additional) {
    static final Node EMPTY = new Node(List.of(), List.of());
    /** The service's cache is stale past maxStale: answer SERVFAIL (compared by identity). */
    static final Node SERVFAIL = new Node(List.of(), List.of());
  }

  /**
   * The records at {@code qname} in {@code zone}, or null when the name does not exist; {@code qtype} only picks the
   * Additional records of a service's name, which hold different records for an SRV question and a PTR one.
   */
  private Node lookup(NamespaceZone.View view, NamespaceZone zone, Name qname, int qtype) {
    int depth = qname.labels() - zone.origin().labels();
    switch (depth) {
      case 0:
        return new Node(List.of(view.soa(), view.ns()), List.of());
      case 1: {
        String l0 = label(qname, 0);
        if (l0.equals("_muster-status")) {
          return new Node(List.of(status(view, qname)), List.of());
        }
        if (l0.equals("_udp")) {
          return Node.EMPTY; // the empty non-terminal above _dns-sd._udp
        }
        if (l0.equals("_tcp")) {
          return view.services().isEmpty() ? null : Node.EMPTY;
        }
        ServiceRecords s = view.services().get(l0);
        return s == null ? null : refused(s) ? Node.SERVFAIL : addresses(s.all);
      }
      case 2: {
        String l0 = label(qname, 0);
        String l1 = label(qname, 1);
        if (l1.equals("_tcp") && l0.startsWith("_")) {
          ServiceRecords s = view.services().get(l0.substring(1));
          return s == null ? null : refused(s) ? Node.SERVFAIL : service(s, qtype);
        }
        if (l1.equals("_udp")) {
          return l0.equals("_dns-sd") ? Node.EMPTY : null;
        }
        ServiceRecords s = view.services().get(l1);
        if (s != null && refused(s)) {
          return Node.SERVFAIL;
        }
        ServiceRecords.Addresses a = s == null ? null : s.byVersion.get(l0);
        return a == null ? null : addresses(a);
      }
      case 3: {
        String l0 = label(qname, 0);
        String l1 = label(qname, 1);
        String l2 = label(qname, 2);
        if (l2.equals("_udp")) {
          return l1.equals("_dns-sd") && l0.equals("_services") ? new Node(view.browse(), List.of()) : null;
        }
        if (l2.equals("_tcp")) {
          ServiceRecords s = l1.startsWith("_") ? view.services().get(l1.substring(1)) : null;
          if (s != null && refused(s)) {
            return Node.SERVFAIL;
          }
          ServiceRecords.InstanceNode i = s == null ? null : s.byLabel.get(l0);
          if (i == null) {
            return null;
          }
          List<Record> additional = i.address() == null ? List.of(i.txt()) : List.of(i.txt(), i.address());
          return new Node(List.of(i.srv(), i.txt()), additional);
        }
        ServiceRecords s = view.services().get(l2);
        if (s != null && refused(s)) {
          return Node.SERVFAIL;
        }
        Map<String, Record> hosts = s == null ? null : s.hostsByVersion.get(l1);
        Record a = hosts == null ? null : hosts.get(l0);
        return a == null ? null : new Node(List.of(a), List.of());
      }
      default:
        return null;
    }
  }

  /** FAIL_CLOSED past {@code maxStale}: the service's cache has been stale that long. */
  private boolean refused(ServiceRecords s) {
    java.time.Instant since = s.staleSince;
    return maxStale != null && since != null
        && java.time.Duration.between(since, clock.instant()).compareTo(maxStale) >= 0;
  }

  private static Node addresses(ServiceRecords.Addresses a) {
    if (a.aaaa().isEmpty()) {
      return new Node(a.a(), List.of());
    }
    if (a.a().isEmpty()) {
      return new Node(a.aaaa(), List.of());
    }
    List<Record> both = new ArrayList<>(a.a().size() + a.aaaa().size());
    both.addAll(a.a());
    both.addAll(a.aaaa());
    return new Node(both, List.of());
  }

  /**
   * {@code _<service>._tcp}: the PTR set (DNS-SD) and the SRV set (RFC 2782), one record of each per routable
   * instance. In Additional: for an SRV question the targets' A/AAAA; for PTR (and ANY) each instance's SRV, TXT and
   * address at its instance name, as DNS-SD clients expect. Every list is prebuilt.
   */
  private static Node service(ServiceRecords s, int qtype) {
    return new Node(s.atService, qtype == Type.SRV ? s.srvAdditional : s.ptrAdditional);
  }

  /** {@code _muster-status}: the revision and staleness served, built per query (O(services)), TTL 0. */
  private Record status(NamespaceZone.View view, Name name) {
    TreeMap<String, ServiceRecords> sorted = new TreeMap<>(view.services());
    long revision = 0;
    long now = clock.millis();
    Long oldestStale = view.directoryStaleSince() == null ? null : view.directoryStaleSince().toEpochMilli();
    for (ServiceRecords s : sorted.values()) {
      revision = Math.max(revision, s.revision);
      if (s.staleSince != null) {
        long since = s.staleSince.toEpochMilli();
        oldestStale = oldestStale == null ? since : Math.min(oldestStale, since);
      }
    }
    List<String> strings = new ArrayList<>();
    strings.add("revision=" + revision);
    strings.add("stale=" + view.anyStale());
    if (oldestStale != null) {
      strings.add("stale_for_ms=" + Math.max(0, now - oldestStale));
    }
    strings.add("services=" + sorted.size());
    strings.add("directory=" + (view.directoryStaleSince() == null ? "fresh" : "stale"));
    for (ServiceRecords s : sorted.values()) {
      strings.add("service=" + s.service + " revision=" + s.revision + " stale=" + (s.staleSince != null)
          + " instances=" + s.ptrs.size());
    }
    ByteArrayOutputStream rdata = new ByteArrayOutputStream();
    for (String str : strings) {
      byte[] b = str.getBytes(StandardCharsets.UTF_8);
      int n = Math.min(b.length, 255);
      rdata.write(n);
      rdata.write(b, 0, n);
    }
    return Record.newRecord(name, Type.TXT, DClass.IN, 0, rdata.toByteArray());
  }

  /** Lower case, as Muster's names are: DNS compares names without regard to case. */
  private static String label(Name name, int n) {
    return name.getLabelString(n).toLowerCase(Locale.ROOT);
  }
}
