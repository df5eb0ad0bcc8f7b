package dev.muster.bench.xds;

import dev.muster.bench.support.Heap;
import dev.muster.bench.support.Jvms;
import dev.muster.bench.support.ProcStats;
import dev.muster.bench.support.Wait;
import dev.muster.etcd.EtcdConfig;
import dev.muster.etcd.EtcdRegistry;
import dev.muster.grpc.echo.Echo;
import dev.muster.registry.Instance;
import dev.muster.registry.RegistrarConfig;
import dev.muster.registry.Registration;
import dev.muster.testing.ChildProcess;
import dev.muster.testing.EtcdCluster;
import dev.muster.xds.XdsBootstrap;
import dev.muster.xds.XdsConfig;
import dev.muster.xds.XdsPushLatency;
import dev.muster.xds.XdsServer;
import io.grpc.Server;
import io.grpc.netty.NettyServerBuilder;
import java.io.IOException;
import java.io.PrintStream;
import java.net.InetSocketAddress;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;

/**
 * {@code muster bench --only xds}: one {@code muster xds} server (in this JVM) and {@value #STREAMS} ADS streams from
 * grpc-java's own xDS client in {@value #JVMS} client JVMs ({@link XdsClientFleet}), all subscribed to one service of
 * three echo providers. Then {@value #CHANGES} changes (a provider's weight), one at a time: each waits until every
 * stream has acknowledged the assignment carrying it. Reported: push-to-ACK per stream and change (from the
 * server's cache hearing the change to the client's ACK; p50, p99, max, n), the time from the etcd write to the last
 * stream's ACK per change (n = {@value #CHANGES}), bytes sent per stream and change, and the server's CPU and heap:
 * this JVM's, which also holds the registry client and the three idle echo servers. Printed, never judged.
 */
public final class XdsBench {
  static final int STREAMS = 1000;
  static final int JVMS = 4;
  static final int CHANGES = 20;
  static final String SERVICE = "fleet";

  /** What one run measured. */
  public record Result(int streams, double connectSeconds, XdsPushLatency pushToAck, XdsPushLatency pushToWrite,
      long[] lastAckMillis,
      double bytesPerStreamPerChange, double cpuMsPerChange, double heapBytesPerStream, double cpuSecondsAtConnect,
      double clientCpuMsPerChange, List<String> failures) {
    public void print(PrintStream out) {
      out.println();
      out.printf("xDS (issue 36): one muster xds, %d ADS streams from grpc-java's xDS client in %d JVMs, one service of"
          + " 3 providers; %d changes, each acknowledged by every stream before the next%n", streams, JVMS, CHANGES);
      if (streams == 0) {
        failures.forEach(f -> out.println("  failed: " + f));
        return;
      }
      long[] sorted = lastAckMillis.clone();
      Arrays.sort(sorted);
      out.printf(Locale.ROOT, "  streams connected and served in %.1f s (server CPU %.1f s meanwhile)%n",
          connectSeconds, cpuSecondsAtConnect);
      out.printf(Locale.ROOT, "  push to ACK, per stream and change: p50 %.1f ms, p99 %.1f ms, max %.1f ms (n = %d)%n",
          ms(pushToAck.p50()), ms(pushToAck.p99()), ms(pushToAck.max()), pushToAck.samples());
      out.printf(Locale.ROOT, "  of which the server's part, to the response written to each stream: p50 %.1f ms, p99 %.1f"
          + " ms, max %.1f ms (n = %d); the rest is the wire and the client JVMs, which share the 2 cores%n",
          ms(pushToWrite.p50()), ms(pushToWrite.p99()), ms(pushToWrite.max()), pushToWrite.samples());
      out.printf(Locale.ROOT, "  etcd write to the last stream's ACK, per change: median %d ms, max %d ms (n = %d)%n",
          sorted.length == 0 ? -1 : sorted[sorted.length / 2], sorted.length == 0 ? -1 : sorted[sorted.length - 1],
          sorted.length);
      out.printf(Locale.ROOT, "  bytes sent per stream and change: %.0f; server CPU per change: %.1f ms (%.3f ms a"
          + " stream); server heap per stream: %.1f KiB%n", bytesPerStreamPerChange, cpuMsPerChange,
          cpuMsPerChange / streams, heapBytesPerStream / 1024);
      out.printf(Locale.ROOT, "  the client JVMs' CPU per change: %.0f ms (%.2f ms a stream): grpc-java's xDS client"
          + " parses, validates and rebuilds its balancer tree for every assignment%n", clientCpuMsPerChange,
          clientCpuMsPerChange / streams);
      failures.forEach(f -> out.println("  failed: " + f));
    }

    private static double ms(Duration d) {
      return d.toNanos() / 1e6;
    }
  }

  private XdsBench() {}

  public static Result run(Path logs, PrintStream progress) {
    List<String> failures = new ArrayList<>();
    List<Server> echo = new ArrayList<>();
    List<ChildProcess> clients = new ArrayList<>();
    long self = ProcessHandle.current().pid();
    try (EtcdCluster etcd = EtcdCluster.builder().members(1).build().start();
        EtcdRegistry registry = EtcdRegistry.connect(EtcdConfig.of(etcd.endpointsString()))) {
      List<Registration> providers = new ArrayList<>();
      for (int i = 0; i < 3; i++) {
        Server s = NettyServerBuilder.forAddress(new InetSocketAddress("127.0.0.1", 0))
            .addService(Echo.service("p" + i)).build().start();
        echo.add(s);
        providers.add(registry.register(Instance.of(SERVICE, "127.0.0.1", s.getPort()).id("p" + i),
            RegistrarConfig.builder().drain(Duration.ZERO).shutdownHook(false).build()));
      }
      try (XdsServer xds = XdsServer.start(registry, XdsConfig.builder()
          .listen(new InetSocketAddress("127.0.0.1", 0)).build())) {
        long heap0 = Heap.usedAfterGc();
        double cpu0 = ProcStats.cpuSeconds(self);
        String bootstrap = XdsBootstrap.of("127.0.0.1:" + xds.address().getPort()).withNodeId("bench").toJson();
        long t0 = System.nanoTime();
        for (int j = 0; j < JVMS; j++) {
          clients.add(Jvms.start(logs, "xds-clients-" + j, List.of("-XX:+UseSerialGC", "-Xmx512m",
              "-Dio.grpc.xds.bootstrapConfig=" + bootstrap), XdsClientFleet.class.getName(),
              List.of(SERVICE, Integer.toString(STREAMS / JVMS), "j" + j)));
        }
        progress.println("xds: " + JVMS + " client JVMs starting " + STREAMS + " streams");
        Wait.until("every stream acknowledged its first assignment", Duration.ofMinutes(5), Duration.ofMillis(100),
            () -> xds.streams() >= STREAMS && xds.acknowledgedPushes() >= STREAMS);
        double connect = (System.nanoTime() - t0) / 1e9;
        double cpuConnected = ProcStats.cpuSeconds(self);
        long heap1 = Heap.usedAfterGc();
        progress.printf(Locale.ROOT, "xds: %d streams served in %.1f s%n", xds.streams(), connect);
        xds.clearPushLatency();
        long acked0 = xds.acknowledgedPushes();
        long bytes0 = xds.bytesSent();
        double cpu1 = ProcStats.cpuSeconds(self);
        double clients1 = clients.stream().mapToDouble(p -> ProcStats.cpuSeconds(p.pid())).sum();
        long[] lastAck = new long[CHANGES];
        for (int c = 0; c < CHANGES; c++) {
          int weight = 100 + c + 1;
          long write = System.nanoTime();
          providers.get(0).update(i -> i.weight(weight)).join();
          long want = acked0 + (long) STREAMS * (c + 1);
          Wait.until("change " + (c + 1) + " acknowledged by every stream", Duration.ofSeconds(60),
              Duration.ofMillis(1), () -> xds.acknowledgedPushes() >= want); // a counter: the wait costs no CPU
          lastAck[c] = (System.nanoTime() - write) / 1_000_000;
        }
        double cpu2 = ProcStats.cpuSeconds(self);
        double clients2 = clients.stream().mapToDouble(p -> ProcStats.cpuSeconds(p.pid())).sum();
        long bytes = xds.bytesSent() - bytes0;
        XdsPushLatency latency = xds.pushLatency();
        XdsPushLatency written = xds.writeLatency();
        progress.printf(Locale.ROOT, "xds: %d changes pushed; push to ACK p99 %.1f ms%n", CHANGES,
            latency.p99().toNanos() / 1e6);
        providers.forEach(Registration::close);
        return new Result(STREAMS, connect, latency, written, lastAck, bytes / (double) STREAMS / CHANGES,
            (cpu2 - cpu1) * 1000 / CHANGES, (heap1 - heap0) / (double) STREAMS, cpuConnected - cpu0,
            (clients2 - clients1) * 1000 / CHANGES, failures);
      }
    } catch (IOException | RuntimeException e) {
      failures.add("xds: " + e.getMessage());
      return new Result(0, 0, null, null, new long[0], 0, 0, 0, 0, 0, failures);
    } finally {
      clients.forEach(ChildProcess::close);
      echo.forEach(Server::shutdownNow);
    }
  }
}
