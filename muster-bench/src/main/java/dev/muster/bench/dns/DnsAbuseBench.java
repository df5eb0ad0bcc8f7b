package dev.muster.bench.dns;

import dev.muster.bench.dns.DnsAbuseResult.ClientView;
import dev.muster.bench.dns.DnsAbuseResult.FloodRow;
import dev.muster.bench.dns.DnsAbuseResult.PerfRow;
import dev.muster.bench.dns.DnsAbuseResult.TcpRow;
import dev.muster.bench.etcd.RawEtcd;
import dev.muster.bench.support.BenchException;
import dev.muster.bench.support.Wait;
import dev.muster.dns.Cidr;
import dev.muster.dns.DnsConfig;
import dev.muster.dns.DnsGateway;
import dev.muster.etcd.EtcdConfig;
import dev.muster.etcd.EtcdRegistry;
import dev.muster.registry.Instance;
import dev.muster.testing.EtcdCluster;
import io.etcd.jetcd.Client;
import java.io.DataInputStream;
import java.io.DataOutputStream;
import java.io.IOException;
import java.io.PrintStream;
import java.net.DatagramPacket;
import java.net.DatagramSocket;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.net.SocketTimeoutException;
import java.nio.ByteBuffer;
import java.nio.channels.DatagramChannel;
import java.nio.channels.SelectionKey;
import java.nio.channels.Selector;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.Random;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.locks.LockSupport;
import org.HdrHistogram.Histogram;
import org.xbill.DNS.Type;

/**
 * {@code muster bench --only dns-abuse}: the DNS gateway as an attacker sees it (issue 35, item 4), once with issue
 * 17's behaviour ({@link Mode#BEFORE}: a rate limit per address only, the full ANY answer, every metadata key in TXT,
 * no TCP deadline, no per-source cap) and once with the defaults ({@link Mode#AFTER}), in one run on one machine.
 *
 * <p>"Spoofed" sources without raw sockets: Linux lets a UDP socket bind any 127.x.y.z address, so a flood sent from
 * sockets bound to a victim's addresses makes the gateway reply to them, and the replies land on those sockets, where
 * they are counted. The amplification factor is the bytes that landed on the victim's addresses over the bytes the
 * attacker sent (out / in). During each flood two real clients ask a legitimate mix at a steady pace: one in its own
 * /24 (127.0.0.1) and one in the victim's /24, and their answered, truncated (TC: a real client would ask again over
 * TCP) and lost fractions and p99 latency are reported with their n. Then slow TCP clients, and dnsperf over a
 * legitimate mix. Every loop here is bounded in count and time; all traffic stays on loopback.
 *
 * <p>Runs on the calling thread, with a sender, a reader and two client threads per flood; figures are printed, never
 * judged.
 */
public final class DnsAbuseBench {
  static final String NAMESPACE = "abuse";
  static final int SERVICES = 10;
  static final int PER_SERVICE = 20;
  static final Duration FLOOD = Duration.ofSeconds(4);
  /** The attacker's pace (a loopback sender on a shared 2-core machine may fall short: the row says what it sent). */
  static final int FLOOD_QPS = 10_000;
  static final int CLIENT_QPS = 50;
  static final Duration CLIENT_TIMEOUT = Duration.ofMillis(500);
  static final int SLOW_TCP = 64;
  static final Duration TCP_WINDOW = Duration.ofSeconds(6);
  static final String VICTIM_PREFIX = "127.66.1.";
  static final String CLIENT = "127.0.0.1";
  static final String NEIGHBOUR = "127.66.1.200";
  static final String SLOW_SOURCE = "127.0.0.50";
  private static final Duration LIMIT = Duration.ofSeconds(60);

  /** The gateway's configuration in a row. */
  enum Mode {
    BEFORE("before"), BEFORE_OFF("before, limit off"), AFTER("after"), AFTER_EXEMPT("after, dnsperf exempt");

    final String label;

    Mode(String label) {
      this.label = label;
    }
  }

  private final Path logs;
  private final PrintStream progress;
  private final List<FloodRow> floods = new ArrayList<>();
  private final List<TcpRow> tcp = new ArrayList<>();
  private final List<PerfRow> perf = new ArrayList<>();
  private final List<String> notes = new ArrayList<>();
  private final List<String> failures = new ArrayList<>();
  private final List<String[]> legitMix;

  private DnsAbuseBench(Path logs, PrintStream progress) {
    this.logs = logs;
    this.progress = progress;
    this.legitMix = legitMix(2_000);
  }

  public static DnsAbuseResult run(Path logs, PrintStream progress) {
    DnsAbuseBench b = new DnsAbuseBench(logs, progress);
    try (EtcdCluster etcd = EtcdCluster.builder().members(1).build().start();
        Client raw = RawEtcd.client(etcd.endpointsString());
        EtcdRegistry registry = EtcdRegistry.connect(EtcdConfig.of(etcd.endpointsString()))) {
      progress.println("dns-abuse: started etcd at " + etcd.endpointsString());
      DnsFleet.write(raw, fleet());
      for (Mode mode : List.of(Mode.BEFORE, Mode.AFTER)) {
        try (DnsGateway gateway = DnsGateway.start(registry, config(mode), LIMIT)) {
          awaitServed(gateway);
          b.floods(mode, gateway);
          b.slowTcp(mode, gateway);
        }
      }
      Optional<Path> dnsperf = DnsPerf.find();
      if (dnsperf.isEmpty()) {
        b.failures.add("dns-abuse dnsperf rows: " + DnsPerf.INSTALL);
      } else {
        b.dnsperf(registry, dnsperf.get());
      }
    } catch (RuntimeException | IOException e) {
      b.failures.add("dns-abuse: " + e.getMessage());
    }
    return new DnsAbuseResult(List.copyOf(b.floods), List.copyOf(b.tcp), List.copyOf(b.perf), List.copyOf(b.notes),
        List.copyOf(b.failures));
  }

  /** Issue 17's behaviour (before) or the defaults (after). */
  static DnsConfig config(Mode mode) {
    DnsConfig.Builder b = DnsConfig.builder().listen(new InetSocketAddress("127.0.0.1", 0)).domain(DnsFleet.DOMAIN)
        .namespaces(List.of(NAMESPACE)).udpThreads(DnsBench.UDP_THREADS);
    return switch (mode) {
      case BEFORE -> before(b.rateLimit(1000, 1000));
      case BEFORE_OFF -> before(b.rateLimit(0, 1));
      case AFTER -> b.build();
      case AFTER_EXEMPT -> b.rrlExempt(List.of(Cidr.parse(CLIENT + "/32"))).build();
    };
  }

  /** Issue 17: a limit per address (a /32 prefix), no limit per response, full ANY, every key, no TCP bounds. */
  private static DnsConfig before(DnsConfig.Builder b) {
    return b.rrlPrefixes(32, 128).rrlResponsesPerSecond(0).minimalAny(false).txtMetadata(List.of("*"))
        .tcpPerSource(64).tcpDeadline(Duration.ofHours(1)).build();
  }

  static List<Instance> fleet() {
    List<Instance> all = new ArrayList<>();
    for (int s = 0; s < SERVICES; s++) {
      for (int j = 0; j < PER_SERVICE; j++) {
        all.add(DnsFleet.instance(NAMESPACE, DnsFleet.service(s), j, PER_SERVICE, s, (2 << 16) + s * 256 + j));
      }
    }
    return all;
  }

  /** {name, type}: instance SRV (40 %), the SRV target's A (40 %), the service's A (20 %); a fixed seed. */
  static List<String[]> legitMix(int n) {
    Random random = new Random(35);
    List<Instance> fleet = fleet();
    List<String[]> out = new ArrayList<>(n);
    for (int k = 0; k < n; k++) {
      Instance i = fleet.get(random.nextInt(fleet.size()));
      int kind = random.nextInt(10);
      out.add(kind < 4 ? new String[] {DnsFleet.instanceName(NAMESPACE, i.service(), i.id()), "SRV"}
          : kind < 8 ? new String[] {i.id() + "." + i.version() + "." + i.service() + "." + DnsFleet.zone(NAMESPACE),
              "A"}
          : new String[] {i.service() + "." + DnsFleet.zone(NAMESPACE), "A"});
    }
    return out;
  }

  private static void awaitServed(DnsGateway gateway) {
    Wait.until("the gateway to serve " + SERVICES + " services", LIMIT, Duration.ofMillis(50),
        () -> gateway.services().getOrDefault(NAMESPACE, List.of()).size() == SERVICES);
    // and every instance: the last service's A answers all of its addresses over TCP
    byte[] q = DnsBench.query(DnsFleet.service(SERVICES - 1) + "." + DnsFleet.zone(NAMESPACE), Type.A);
    Wait.until("every instance served", LIMIT, Duration.ofMillis(50), () -> {
      byte[] reply = gateway.answer(q, false);
      return reply != null && ((reply[6] & 0xFF) << 8 | (reply[7] & 0xFF)) == PER_SERVICE;
    });
  }

  // ---- UDP floods -----------------------------------------------------------------------------------------------

  private void floods(Mode mode, DnsGateway gateway) throws IOException {
    String service = DnsFleet.service(0);
    byte[] serviceA = DnsBench.query(service + "." + DnsFleet.zone(NAMESPACE), Type.A);
    byte[] any = DnsBench.query("_" + service + "._tcp." + DnsFleet.zone(NAMESPACE), Type.ANY);
    List<byte[]> varied = new ArrayList<>();
    for (Instance i : fleet()) {
      varied.add(DnsBench.query(DnsFleet.instanceName(NAMESPACE, i.service(), i.id()), Type.TXT));
    }
    List<String> victim = new ArrayList<>();
    for (int i = 1; i <= 16; i++) {
      victim.add(VICTIM_PREFIX + i);
    }
    List<String> spread = new ArrayList<>();
    for (int i = 0; i < 256; i++) {
      spread.add("127.100." + i + ".1");
    }
    flood(mode, gateway, "reflection: service A, one /24", victim, List.of(serviceA));
    flood(mode, gateway, "ANY flood, one /24", victim, List.of(any));
    flood(mode, gateway, "varied names (TXT), one /24", victim, varied);
    flood(mode, gateway, "service A from 256 /24s", spread, List.of(serviceA));
  }

  private void flood(Mode mode, DnsGateway gateway, String scenario, List<String> sources, List<byte[]> queries)
      throws IOException {
    progress.printf("dns-abuse: %s: %s, %d s...%n", mode.label, scenario, FLOOD.toSeconds());
    InetSocketAddress at = gateway.address();
    List<DatagramChannel> channels = new ArrayList<>();
    AtomicBoolean stop = new AtomicBoolean();
    long[] landed = new long[2]; // replies, bytes: the reader's, read after join
    try (Selector selector = Selector.open()) {
      for (String s : sources) {
        DatagramChannel c = DatagramChannel.open();
        channels.add(c);
        c.bind(new InetSocketAddress(InetAddress.getByName(s), 0));
        c.configureBlocking(false);
        c.register(selector, SelectionKey.OP_READ);
      }
      Thread reader = new Thread(() -> read(selector, stop, landed), "dns-abuse-victim");
      reader.start();
      DnsGateway.Stats before = gateway.stats();
      Steady client = new Steady(at, CLIENT);
      Steady neighbour = new Steady(at, NEIGHBOUR);
      Thread c1 = new Thread(client, "dns-abuse-client");
      Thread c2 = new Thread(neighbour, "dns-abuse-neighbour");
      c1.start();
      c2.start();
      long[] sent = send(channels, at, queries);
      client.stop.set(true);
      neighbour.stop.set(true);
      join(c1);
      join(c2);
      Wait.sleep(Duration.ofMillis(300)); // the last replies land
      stop.set(true);
      selector.wakeup();
      join(reader);
      DnsGateway.Stats after = gateway.stats();
      FloodRow row = new FloodRow(mode, scenario, sent[0], sent[1], landed[0], landed[1],
          after.udpBytesIn() - before.udpBytesIn(), after.udpBytesOut() - before.udpBytesOut(),
          after.rateLimited() - before.rateLimited(), after.slipped() - before.slipped(), client.result("client"),
          neighbour.result("neighbour"));
      floods.add(row);
      progress.printf(Locale.ROOT, "dns-abuse: %s: %s: sent %d, amplification %.2f; client %s; neighbour %s%n",
          mode.label, scenario, sent[0], row.amplification(), row.client().cell(), row.neighbour().cell());
      if (after.errors() != before.errors()) {
        notes.add(mode.label + ", " + scenario + ": the gateway counted " + (after.errors() - before.errors())
            + " errors");
      }
    } finally {
      for (DatagramChannel c : channels) {
        c.close();
      }
    }
  }

  /** Sends for {@link #FLOOD} at {@link #FLOOD_QPS}, round robin over sources and queries; {queries, bytes} sent. */
  private static long[] send(List<DatagramChannel> channels, InetSocketAddress at, List<byte[]> queries)
      throws IOException {
    long start = System.nanoTime();
    long end = start + FLOOD.toNanos();
    long count = 0;
    long bytes = 0;
    int batch = 50;
    long max = FLOOD.toSeconds() * FLOOD_QPS;
    ByteBuffer[] wires = queries.stream().map(ByteBuffer::wrap).toArray(ByteBuffer[]::new);
    int k = 0;
    while (System.nanoTime() < end && count < max) {
      for (int i = 0; i < batch; i++, k++) {
        ByteBuffer w = wires[k % wires.length];
        // a fresh id per query, as a real flood's; the bytes are the same size
        w.putShort(0, (short) k);
        w.rewind();
        int n = channels.get(k % channels.size()).send(w, at);
        if (n > 0) {
          count++;
          bytes += n;
        }
      }
      long due = start + count * 1_000_000_000L / FLOOD_QPS;
      long wait = due - System.nanoTime();
      if (wait > 0) {
        LockSupport.parkNanos(wait);
      }
    }
    return new long[] {count, bytes};
  }

  private static void read(Selector selector, AtomicBoolean stop, long[] landed) {
    ByteBuffer buf = ByteBuffer.allocate(65_535);
    long replies = 0;
    long bytes = 0;
    try {
      while (!stop.get()) {
        selector.select(100);
        for (SelectionKey key : selector.selectedKeys()) {
          DatagramChannel c = (DatagramChannel) key.channel();
          while (true) {
            buf.clear();
            if (c.receive(buf) == null) {
              break;
            }
            replies++;
            bytes += buf.position();
          }
        }
        selector.selectedKeys().clear();
      }
    } catch (IOException e) {
      // a closed selector: the counts so far stand
    }
    landed[0] = replies;
    landed[1] = bytes;
  }

  /** A real client: one query at a time at {@link #CLIENT_QPS}, each waited for up to {@link #CLIENT_TIMEOUT}. */
  private final class Steady implements Runnable {
    final AtomicBoolean stop = new AtomicBoolean();
    private final InetSocketAddress at;
    private final String source;
    private final Histogram micros = new Histogram(TimeUnit.SECONDS.toMicros(10), 3);
    private int asked;
    private int answered;
    private int truncated;
    private int lost;

    Steady(InetSocketAddress at, String source) {
      this.at = at;
      this.source = source;
    }

    @Override
    public void run() {
      byte[] buf = new byte[65_535];
      try (DatagramSocket s = new DatagramSocket(new InetSocketAddress(InetAddress.getByName(source), 0))) {
        long start = System.nanoTime();
        int k = 0;
        while (!stop.get()) {
          String[] q = legitMix.get(k % legitMix.size());
          byte[] wire = DnsBench.query(q[0], Type.value(q[1]));
          int id = (k * 7919 + 13) & 0xFFFF;
          wire[0] = (byte) (id >> 8);
          wire[1] = (byte) id;
          long t0 = System.nanoTime();
          s.send(new DatagramPacket(wire, wire.length, at));
          asked++;
          long deadline = t0 + CLIENT_TIMEOUT.toNanos();
          boolean got = false;
          while (!got) {
            long left = deadline - System.nanoTime();
            if (left <= 0) {
              break;
            }
            s.setSoTimeout((int) Math.max(1, TimeUnit.NANOSECONDS.toMillis(left)));
            DatagramPacket p = new DatagramPacket(buf, buf.length);
            try {
              s.receive(p);
            } catch (SocketTimeoutException e) {
              break;
            }
            if (((buf[0] & 0xFF) << 8 | (buf[1] & 0xFF)) != id) {
              continue; // a late reply to an earlier query
            }
            got = true;
            micros.recordValue(Math.max(1, (System.nanoTime() - t0) / 1000));
            if ((buf[2] & 0x02) != 0) {
              truncated++;
            } else {
              answered++;
            }
          }
          if (!got) {
            lost++;
          }
          k++;
          long due = start + (long) k * 1_000_000_000L / CLIENT_QPS;
          long wait = due - System.nanoTime();
          if (wait > 0) {
            LockSupport.parkNanos(wait);
          }
        }
      } catch (IOException e) {
        throw new BenchException("the " + source + " client failed: " + e.getMessage(), e);
      }
    }

    ClientView result(String who) {
      return new ClientView(who, asked, answered, truncated, lost, micros);
    }
  }

  // ---- slow TCP clients -----------------------------------------------------------------------------------------

  private void slowTcp(Mode mode, DnsGateway gateway) throws IOException {
    progress.printf("dns-abuse: %s: %d slow TCP clients from %s, %d s...%n", mode.label, SLOW_TCP, SLOW_SOURCE,
        TCP_WINDOW.toSeconds());
    InetSocketAddress at = gateway.address();
    List<Socket> slow = new ArrayList<>();
    int closedAtAccept = 0;
    int asked = 0;
    int answered = 0;
    Histogram micros = new Histogram(TimeUnit.SECONDS.toMicros(10), 3);
    try {
      for (int i = 0; i < SLOW_TCP; i++) {
        slow.add(new Socket(at.getAddress(), at.getPort(), InetAddress.getByName(SLOW_SOURCE), 0));
      }
      Wait.sleep(Duration.ofMillis(200)); // accepted (or closed) by now
      for (Socket s : slow) {
        closedAtAccept += closed(s, 1) ? 1 : 0;
      }
      long end = System.nanoTime() + TCP_WINDOW.toNanos();
      int k = 0;
      while (System.nanoTime() < end) {
        String[] q = legitMix.get(k++ % legitMix.size());
        asked++;
        long t0 = System.nanoTime();
        if (tcpQuery(at, DnsBench.query(q[0], Type.value(q[1])))) {
          answered++;
          micros.recordValue(Math.max(1, (System.nanoTime() - t0) / 1000));
        }
        LockSupport.parkNanos(Math.max(0, t0 + 100_000_000L - System.nanoTime()));
      }
      int openAtEnd = 0;
      for (Socket s : slow) {
        openAtEnd += closed(s, 1) ? 0 : 1;
      }
      tcp.add(new TcpRow(mode, SLOW_TCP, closedAtAccept, openAtEnd, asked, answered, micros));
      progress.printf("dns-abuse: %s: slow TCP: %d closed at accept, %d open at the end; client %d/%d answered%n",
          mode.label, closedAtAccept, openAtEnd, answered, asked);
    } finally {
      for (Socket s : slow) {
        s.close();
      }
    }
  }

  /** Whether the gateway closed {@code s} (EOF or reset) rather than leaving a read waiting {@code millis}. */
  private static boolean closed(Socket s, int millis) {
    try {
      s.setSoTimeout(millis);
      return s.getInputStream().read() < 0;
    } catch (SocketTimeoutException e) {
      return false;
    } catch (IOException e) {
      return true;
    }
  }

  /** One query on a new connection (RFC 7766 framing); whether a reply came within a second. */
  private static boolean tcpQuery(InetSocketAddress at, byte[] query) {
    try (Socket s = new Socket()) {
      s.connect(at, 1000);
      s.setSoTimeout(1000);
      DataOutputStream out = new DataOutputStream(s.getOutputStream());
      out.writeShort(query.length);
      out.write(query);
      out.flush();
      DataInputStream in = new DataInputStream(s.getInputStream());
      int length = in.readUnsignedShort();
      in.readFully(new byte[length]);
      return true;
    } catch (IOException e) {
      return false; // closed at accept, reset, or no reply in time
    }
  }

  // ---- dnsperf --------------------------------------------------------------------------------------------------

  private void dnsperf(EtcdRegistry registry, Path binary) {
    List<String> lines = new ArrayList<>();
    for (String[] q : legitMix) {
      lines.add(q[0] + " " + q[1]);
    }
    Path data = DnsFleet.writeLines(logs.resolve("dns-abuse-legit.txt"), lines);
    DnsPerf.Options o = new DnsPerf.Options(5, 1, 1, 20);
    for (Mode mode : Mode.values()) {
      try (DnsGateway gateway = DnsGateway.start(registry, config(mode), LIMIT)) {
        awaitServed(gateway);
        progress.printf("dns-abuse: dnsperf, %s, %d s...%n", mode.label, o.seconds());
        DnsPerf.run(binary, gateway.address(), data, new DnsPerf.Options(2, 1, 1, 20),
            logs.resolve("dnsperf-abuse-warmup.out"));
        DnsGateway.Stats before = gateway.stats();
        DnsPerf.Output out = DnsPerf.run(binary, gateway.address(), data, o,
            logs.resolve("dnsperf-abuse-" + mode.name().toLowerCase(Locale.ROOT) + ".out"));
        DnsGateway.Stats after = gateway.stats();
        perf.add(new PerfRow(mode, o, out, after.rateLimited() - before.rateLimited(),
            after.slipped() - before.slipped()));
        Map<String, Long> rcodes = new HashMap<>(out.rcodes());
        rcodes.remove("NOERROR");
        if (!rcodes.isEmpty()) {
          notes.add("dnsperf, " + mode.label + ": response codes " + out.rcodes());
        }
      } catch (RuntimeException e) {
        failures.add("dns-abuse dnsperf, " + mode.label + ": " + e.getMessage());
      }
    }
  }

  private static void join(Thread t) {
    try {
      t.join(TimeUnit.SECONDS.toMillis(30));
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new BenchException("interrupted");
    }
    if (t.isAlive()) {
      throw new BenchException(t.getName() + " did not stop within 30 s");
    }
  }
}
