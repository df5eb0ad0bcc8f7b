package dev.muster.dns.internal;

import dev.muster.cache.EndpointSet;
import dev.muster.registry.Instance;
import dev.muster.registry.InstanceState;
import java.io.ByteArrayOutputStream;
import java.net.Inet4Address;
import java.net.InetAddress;
import java.net.UnknownHostException;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.xbill.DNS.AAAARecord;
import org.xbill.DNS.ARecord;
import org.xbill.DNS.Address;
import org.xbill.DNS.DClass;
import org.xbill.DNS.Name;
import org.xbill.DNS.NameTooLongException;
import org.xbill.DNS.PTRRecord;
import org.xbill.DNS.Record;
import org.xbill.DNS.SRVRecord;
import org.xbill.DNS.TXTRecord;
import org.xbill.DNS.TextParseException;
import org.xbill.DNS.Type;

/**
 * Every record of one service, built once from one endpoint set (on the cache's notifier) and then only
 * read: a query copies references out of it and never builds a record (docs/design-dns.md). Immutable.
 *
 * <p>Names, under the zone {@code <ns>.<domain>}:
 * <ul>
 *   <li>{@code _<service>._tcp} PTR {@code <label>._<service>._tcp}, one per routable (UP) instance; the label is
 *       the instance id, or {@code <id>-<version>} when two versions share the id;
 *   <li>{@code _<service>._tcp} SRV too (RFC 2782's name for a service, which SRV clients such as Go's
 *       {@code net.LookupSRV}, the JDK's resolver and Prometheus ask): one per routable instance, the same record as
 *       at its instance name;
 *   <li>at {@code <label>._<service>._tcp}: SRV (priority by zone, weight, port, target) and TXT;
 *   <li>the SRV target of an IP address is the host name {@code <id>.<version>.<service>} with its A or AAAA; of a
 *       host name address, that name itself (no A from us);
 *   <li>{@code <service>} A/AAAA: every routable instance; {@code <version>.<service>}: those of the version.
 * </ul>
 */
public final class ServiceRecords {
  /** The records at one instance's DNS-SD name. */
  record InstanceNode(SRVRecord srv, TXTRecord txt, Record address) {}

  /** The A and AAAA records at one name. */
  record Addresses(List<Record> a, List<Record> aaaa) {
    static final Addresses NONE = new Addresses(List.of(), List.of());

    List<Record> of(int type) {
      return type == Type.A ? a : aaaa;
    }
  }

  static final int OTHER_ZONE_PRIORITY = 10;
  private static final int MAX_TXT_STRING = 255;

  final String service;
  final long revision;
  final java.time.Instant staleSince; // null while the cache is fresh
  final Name ptrName;
  final List<Record> ptrs;
  final List<Record> ptrAdditional; // each instance's SRV, TXT and address, for a PTR answer
  final List<Record> srvs; // at ptrName: one SRV per routable instance (RFC 2782), no two equal (RFC 2181 §5)
  final List<Record> atService; // ptrs then srvs: every record at ptrName, for the responder's lookup
  final List<Record> srvAdditional; // the A/AAAA of the targets of srvs, for an SRV answer at ptrName
  final Map<String, InstanceNode> byLabel;
  final Map<String, Map<String, Record>> hostsByVersion; // version -> id -> A or AAAA
  final Addresses all;
  final Map<String, Addresses> byVersion;
  final int skippedTxtStrings;
  final int unservable;

  private ServiceRecords(String service, long revision, java.time.Instant staleSince, Name ptrName, List<Record> ptrs, List<Record> ptrAdditional,
      List<Record> srvs, List<Record> srvAdditional, Map<String, InstanceNode> byLabel,
      Map<String, Map<String, Record>> hostsByVersion, Addresses all, Map<String, Addresses> byVersion, int skippedTxtStrings, int unservable) {
    this.service = service;
    this.revision = revision;
    this.staleSince = staleSince;
    this.ptrName = ptrName;
    this.ptrs = ptrs;
    this.ptrAdditional = ptrAdditional;
    this.srvs = srvs;
    List<Record> both = new ArrayList<>(ptrs.size() + srvs.size());
    both.addAll(ptrs);
    both.addAll(srvs);
    this.atService = List.copyOf(both);
    this.srvAdditional = srvAdditional;
    this.byLabel = byLabel;
    this.hostsByVersion = hostsByVersion;
    this.all = all;
    this.byVersion = byVersion;
    this.skippedTxtStrings = skippedTxtStrings;
    this.unservable = unservable;
  }

  /**
   * The records of {@code set}'s routable instances, each with TTL {@code ttlSeconds}. O(instances).
   *
   * @param staleSince when the cache became stale, or null while it is fresh
   * @param txtMetadata which metadata keys the TXT records carry
   */
  public static ServiceRecords build(String service, Name origin, EndpointSet set, java.time.Instant staleSince,
      long ttlSeconds, String localZone, TxtMetadata txtMetadata) {
    Name ptrName = name("_" + service + "._tcp", origin);
    Name serviceHost = name(service, origin);
    List<Instance> routable = new ArrayList<>();
    Map<String, Integer> idCount = new HashMap<>();
    for (Instance i : set.instances()) {
      if (i.state() == InstanceState.UP) {
        routable.add(i);
        idCount.merge(i.id(), 1, Integer::sum);
      }
    }
    List<Record> ptrs = new ArrayList<>(routable.size());
    List<Record> additional = new ArrayList<>(3 * routable.size());
    Set<Record> srvs = new java.util.LinkedHashSet<>(); // Record equality: owner, type, class and rdata
    List<Record> srvAdditional = new ArrayList<>(routable.size());
    Map<String, InstanceNode> byLabel = new HashMap<>();
    Map<String, Map<String, Record>> hosts = new HashMap<>();
    List<Record> allA = new ArrayList<>();
    List<Record> allAaaa = new ArrayList<>();
    Map<String, List<Record>> versionA = new HashMap<>();
    Map<String, List<Record>> versionAaaa = new HashMap<>();
    int skipped = 0;
    int unservable = 0;
    Set<Object> seen = new HashSet<>();
    for (Instance i : routable) {
      String label = idCount.get(i.id()) == 1 ? i.id() : i.id() + "-" + i.version();
      if (label.length() > 63 || byLabel.containsKey(label)) {
        unservable++; // an id-version pair longer than a label, or equal to another instance's id
        continue;
      }
      InetAddress ip = ip(i.address());
      Name instanceName;
      Name host;
      try {
        instanceName = name(label, ptrName);
        host = ip == null ? hostName(i.address()) : name(i.id() + "." + i.version(), serviceHost);
      } catch (IllegalArgumentException e) {
        unservable++; // longer than a DNS name may be (255 bytes)
        continue;
      }
      if (host == null) {
        unservable++; // not an IP literal and not a DNS name: nothing a client could resolve
        continue;
      }
      Record address = null;
      if (ip != null) {
        address = ip instanceof Inet4Address ? new ARecord(host, DClass.IN, ttlSeconds, ip)
            : new AAAARecord(host, DClass.IN, ttlSeconds, ip);
        hosts.computeIfAbsent(i.version(), v -> new HashMap<>()).put(i.id(), address);
        // one A per address: instances on one host differ by port, which only SRV carries (RFC 2181 §5: no
        // duplicate records in an RRset)
        if (seen.add(ip)) {
          (ip instanceof Inet4Address ? allA : allAaaa).add(address.withName(serviceHost));
        }
        if (seen.add(i.version() + "/" + ip.getHostAddress())) {
          Name versionHost = name(i.version(), serviceHost);
          (ip instanceof Inet4Address ? versionA : versionAaaa).computeIfAbsent(i.version(),
              v -> new ArrayList<>()).add(address.withName(versionHost));
        }
      }
      int priority = localZone == null || localZone.equals(i.zone()) ? 0 : OTHER_ZONE_PRIORITY;
      SRVRecord srv = new SRVRecord(instanceName, DClass.IN, ttlSeconds, priority, Math.min(i.weight(), 65_535),
          i.port(), host);
      List<String> strings = txtStrings(i, txtMetadata);
      int kept = 0;
      ByteArrayOutputStream rdata = new ByteArrayOutputStream();
      for (String s : strings) {
        byte[] b = s.getBytes(StandardCharsets.UTF_8);
        if (b.length > MAX_TXT_STRING) {
          skipped++;
          continue;
        }
        rdata.write(b.length);
        rdata.write(b, 0, b.length);
        kept++;
      }
      if (kept == 0) {
        rdata.write(0); // RFC 6763 §6.1: an empty TXT record is one empty string
      }
      TXTRecord txt = (TXTRecord) Record.newRecord(instanceName, Type.TXT, DClass.IN, ttlSeconds,
          rdata.toByteArray());
      byLabel.put(label, new InstanceNode(srv, txt, address));
      ptrs.add(new PTRRecord(ptrName, DClass.IN, ttlSeconds, instanceName));
      additional.add(srv);
      additional.add(txt);
      // two instances with one host-name address and one port would make two equal records: one is kept
      if (srvs.add(srv.withName(ptrName)) && address != null) {
        srvAdditional.add(address);
      }
      if (address != null) {
        additional.add(address);
      }
    }
    Map<String, Addresses> byVersion = new HashMap<>();
    Set<String> versions = new HashSet<>(versionA.keySet());
    versions.addAll(versionAaaa.keySet());
    for (String v : versions) {
      byVersion.put(v, new Addresses(List.copyOf(versionA.getOrDefault(v, List.of())),
          List.copyOf(versionAaaa.getOrDefault(v, List.of()))));
    }
    Map<String, Map<String, Record>> frozenHosts = new HashMap<>();
    hosts.forEach((v, m) -> frozenHosts.put(v, Map.copyOf(m)));
    return new ServiceRecords(service, set.revision(), staleSince, ptrName, List.copyOf(ptrs), List.copyOf(additional),
        List.copyOf(srvs), List.copyOf(srvAdditional), Map.copyOf(byLabel),
        Map.copyOf(frozenHosts), new Addresses(List.copyOf(allA), List.copyOf(allAaaa)), Map.copyOf(byVersion),
        skipped, unservable);
  }

  /**
   * The TXT strings of an instance (RFC 6763 §6): {@code version=}, {@code zone=}, {@code region=}, {@code weight=},
   * each tag as a key without a value (a boolean attribute), then the metadata that {@code shown} lets out as
   * {@code key=value}. A key that holds '=' or repeats one before it is left out: the RFC's keys are unique and end
   * at the first '='.
   */
  static List<String> txtStrings(Instance i, TxtMetadata shown) {
    List<String> out = new ArrayList<>();
    Set<String> keys = new HashSet<>();
    add(out, keys, "version", i.version());
    if (i.zone() != null) {
      add(out, keys, "zone", i.zone());
    }
    if (i.region() != null) {
      add(out, keys, "region", i.region());
    }
    add(out, keys, "weight", Integer.toString(i.weight()));
    for (String tag : i.tags()) {
      add(out, keys, tag, null);
    }
    i.metadata().forEach((k, v) -> {
      if (shown.shows(k)) {
        add(out, keys, k, v);
      }
    });
    return out;
  }

  private static void add(List<String> out, Set<String> keys, String key, String value) {
    if (key.isEmpty() || key.indexOf('=') >= 0 || !keys.add(key.toLowerCase(java.util.Locale.ROOT))) {
      return;
    }
    out.add(value == null ? key : key + "=" + value);
  }

  /** The IP address a literal names, or null for a host name (no lookup is ever made). */
  private static InetAddress ip(String address) {
    try {
      return Address.getByAddress(address);
    } catch (UnknownHostException e) {
      return null;
    }
  }

  /** A host name address as an absolute DNS name, or null when it is not one. */
  private static Name hostName(String address) {
    try {
      return Name.fromString(address.endsWith(".") ? address : address + ".");
    } catch (TextParseException e) {
      return null;
    }
  }

  /** {@code relative} under {@code origin}; Muster's names are DNS labels, so this only fails on overlong names. */
  static Name name(String relative, Name origin) {
    try {
      return Name.concatenate(Name.fromString(relative), origin);
    } catch (TextParseException | NameTooLongException e) {
      throw new IllegalArgumentException("cannot make a DNS name of " + relative + " under " + origin + ": "
          + e.getMessage(), e);
    }
  }
}
