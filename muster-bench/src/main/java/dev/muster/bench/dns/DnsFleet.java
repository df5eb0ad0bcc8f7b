package dev.muster.bench.dns;

import dev.muster.bench.etcd.RawEtcd;
import dev.muster.registry.Instance;
import dev.muster.registry.InstanceCodec;
import dev.muster.registry.RegistryLayout;
import io.etcd.jetcd.Client;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Random;

/**
 * What the dns section puts in etcd and asks the gateway: {@value #SERVICES} services of {@value #PER_SERVICE}
 * instances in namespace {@value #NAMESPACE}, each instance on an address of its own (127.x), in three versions and
 * three zones, with tags and metadata, so that each TXT record is as long as a real one (about 150 bytes); and the
 * dnsperf data files over them. Deterministic: the same fleet and the same query files every run.
 */
final class DnsFleet {
  static final String NAMESPACE = "bench";
  static final String DOMAIN = "muster.";
  static final int SERVICES = 100;
  static final int PER_SERVICE = 100;
  /** Where the allocation probe's two services live, apart from the measured zone. */
  static final String PROBE_NAMESPACE = "alloc";

  /** One kind of query in the mixed file and its share of it, in percent. */
  enum Kind {
    SRV(30), TXT(15), HOST_A(30), SERVICE_A(15), PTR(10);

    final int percent;

    Kind(int percent) {
      this.percent = percent;
    }
  }

  private DnsFleet() {}

  static String service(int s) {
    return String.format("svc-%02d", s);
  }

  /**
   * Instance {@code j} of {@code service}: id {@code i<j>} (as many digits as {@code count - 1} has), version v3
   * (60 %), v4 (30 %) or v5 (10 %, tagged canary), zones a/b/c in turn, address {@code 127.<b>.<c>.<d>} from
   * {@code addressBase + j} (distinct within a base), metadata of a team, a commit, a protocol and a health path.
   */
  static Instance instance(String namespace, String service, int j, int count, int team, int addressBase) {
    int k = addressBase + j;
    String version = j % 10 < 6 ? "v3" : j % 10 < 9 ? "v4" : "v5";
    Instance i = Instance.of(service, "127." + (k >> 16 & 0xff) + "." + (k >> 8 & 0xff) + "." + (k & 0xff),
            8080 + j % 4)
        .id(id(j, count)).namespace(namespace).version(version).zone("zone-" + (char) ('a' + j % 3))
        .region("eu-west-1").tag(j % 2 == 0 ? "http" : "grpc").meta("team", "team-" + team)
        .meta("commit", version.equals("v3") ? "4f9c2e1a7b3d" : version.equals("v4") ? "a18e55c0d9f2" : "c07b3e9912aa")
        .meta("protocol", j % 2 == 0 ? "http/1.1" : "h2").meta("health", "/healthz");
    return version.equals("v5") ? i.tag("canary") : i;
  }

  static String id(int j, int count) {
    int digits = Integer.toString(Math.max(1, count - 1)).length();
    return "i" + String.format("%0" + digits + "d", j);
  }

  /** The measured fleet: {@value #SERVICES} × {@value #PER_SERVICE} instances, addresses from 127.1.0.0. */
  static List<Instance> fleet() {
    List<Instance> all = new ArrayList<>(SERVICES * PER_SERVICE);
    for (int s = 0; s < SERVICES; s++) {
      for (int j = 0; j < PER_SERVICE; j++) {
        all.add(instance(NAMESPACE, service(s), j, PER_SERVICE, s % 12, (1 << 16) + s * PER_SERVICE + j));
      }
    }
    return all;
  }

  /**
   * The probe's services, {@code small} and {@code large} (names of one length, ids of one length, the same
   * metadata), so that one instance's SRV answer has the same size in both.
   */
  static List<Instance> probe(int small, int large) {
    List<Instance> all = new ArrayList<>(small + large);
    int ids = Math.max(small, large); // ids as long in both
    for (int j = 0; j < small; j++) {
      all.add(instance(PROBE_NAMESPACE, "small", j, ids, 1, (2 << 16) + j));
    }
    for (int j = 0; j < large; j++) {
      all.add(instance(PROBE_NAMESPACE, "large", j, ids, 1, (3 << 16) + j));
    }
    return all;
  }

  /** Puts each instance at its key, without a lease (the private etcd is gone after the section). */
  static void write(Client raw, List<Instance> instances) {
    RegistryLayout layout = RegistryLayout.defaults();
    String[] keys = new String[instances.size()];
    byte[][] values = new byte[instances.size()][];
    for (int i = 0; i < keys.length; i++) {
      keys[i] = layout.instanceKey(instances.get(i));
      values[i] = InstanceCodec.encode(instances.get(i));
    }
    RawEtcd.putAll(raw, keys, values);
  }

  static String zone(String namespace) {
    return namespace + "." + DOMAIN;
  }

  /** The DNS-SD name of instance {@code j}: {@code <id>._<service>._tcp.<ns>.muster.} (SRV and TXT). */
  static String instanceName(String namespace, String service, String id) {
    return id + "._" + service + "._tcp." + zone(namespace);
  }

  /** The line of one query of {@code kind} about instance {@code j} of service {@code s} of the fleet. */
  static String query(Kind kind, int s, int j) {
    String service = service(s);
    Instance i = instance(NAMESPACE, service, j, PER_SERVICE, s % 12, 0);
    return switch (kind) {
      case SRV -> instanceName(NAMESPACE, service, i.id()) + " SRV";
      case TXT -> instanceName(NAMESPACE, service, i.id()) + " TXT";
      case HOST_A -> i.id() + "." + i.version() + "." + service + "." + zone(NAMESPACE) + " A";
      case SERVICE_A -> service + "." + zone(NAMESPACE) + " A";
      case PTR -> "_" + service + "._tcp." + zone(NAMESPACE) + " PTR";
    };
  }

  /**
   * {@code lines} queries in random order (a fixed seed), each kind in its {@link Kind#percent share}, each about a
   * random service and instance: the mix a fleet of DNS-SD clients (PTR, then SRV/TXT, then the target's A) and of
   * plain clients (the service's A) would send.
   */
  static List<String> mixed(int lines) {
    Random random = new Random(20_26);
    List<String> out = new ArrayList<>(lines);
    for (Kind kind : Kind.values()) {
      for (int n = 0; n < lines * kind.percent / 100; n++) {
        out.add(query(kind, random.nextInt(SERVICES), random.nextInt(PER_SERVICE)));
      }
    }
    Collections.shuffle(out, random);
    return out;
  }

  /** Every instance's SRV query once, in random order (a fixed seed). */
  static List<String> srvOnly() {
    List<String> out = new ArrayList<>(SERVICES * PER_SERVICE);
    for (int s = 0; s < SERVICES; s++) {
      for (int j = 0; j < PER_SERVICE; j++) {
        out.add(query(Kind.SRV, s, j));
      }
    }
    Collections.shuffle(out, new Random(20_26));
    return out;
  }

  static Path writeLines(Path file, List<String> lines) {
    try {
      Files.write(file, lines);
      return file;
    } catch (IOException e) {
      throw new UncheckedIOException("cannot write " + file + ": " + e.getMessage(), e);
    }
  }
}
