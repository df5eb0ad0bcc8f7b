import dev.muster.bench.memory.Footprint;
import dev.muster.cache.CacheConfig;
import dev.muster.cache.EndpointCache;
import dev.muster.etcd.EtcdConfig;
import dev.muster.etcd.EtcdRegistry;
import dev.muster.registry.Instance;
import dev.muster.registry.RegistrarConfig;
import dev.muster.registry.Registration;
import dev.muster.registry.RegistrationListener;
import dev.muster.testing.EtcdCluster;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

/**
 * Where a cache's bytes go (issue 33 item 4, target 2,278 B per cache at 10,000 caches). M caches of one service
 * of 3 instances on one EtcdRegistry; JOL walks the registry before and after and prints the growth per cache by
 * class (every class over 1 B) and by owner (the class's package: Muster, jetcd, gRPC, Netty, the JDK). A
 * source-file program, not part of the bench:
 *
 * <pre>
 * java -cp muster-bench/target/muster-bench.jar muster-bench/probe/CacheFootprintProbe.java .cache/etcd/default/usr/bin/etcd 1000
 * </pre>
 * etcd runs under muster-testing's {@link EtcdCluster}, stopped by pid on close.
 */
public class CacheFootprintProbe {
  public static void main(String[] args) throws Exception {
    if (args.length != 2) {
      System.err.println("usage: CacheFootprintProbe ETCD_BIN CACHES (e.g. ... 1000)");
      System.exit(2);
    }
    int m = Integer.parseInt(args[1]);
    try (EtcdCluster etcd = EtcdCluster.builder().binary(Path.of(args[0])).build().start();
         EtcdRegistry provider = EtcdRegistry.connect(EtcdConfig.of(etcd.endpointsString()));
         EtcdRegistry consumers = EtcdRegistry.connect(EtcdConfig.of(etcd.endpointsString()))) {
      RegistrarConfig rc = RegistrarConfig.builder().drain(Duration.ZERO).shutdownHook(false).build();
      List<Registration> regs = new ArrayList<>();
      for (int i = 0; i < 3; i++) {
        regs.add(provider.register(Instance.of("fp", "10.0.0." + (i + 1), 8080), rc, RegistrationListener.NONE));
      }
      consumers.watch(CacheConfig.builder("fp").build()).awaitReady(Duration.ofSeconds(10)); // classes, pools
      Footprint before = Footprint.of(consumers);
      CacheConfig config = CacheConfig.builder("fp").build();
      List<EndpointCache> caches = new ArrayList<>();
      for (int i = 0; i < m; i++) {
        caches.add(consumers.watch(config));
      }
      for (EndpointCache c : caches) {
        long deadline = System.nanoTime() + 30_000_000_000L;
        while (c.current().size() != 3 && System.nanoTime() < deadline) {
          Thread.sleep(5);
        }
      }
      Thread.sleep(1000);
      Footprint growth = Footprint.of(consumers).minus(before);
      System.out.printf("%d caches (one shared CacheConfig), %.1f B per cache by JOL%n", m,
          growth.bytes() / (double) m);
      Map<String, double[]> owners = new TreeMap<>();
      for (Footprint.Line l : growth.top(500, 1)) {
        String owner = owner(l.type());
        owners.computeIfAbsent(owner, k -> new double[2])[0] += l.bytes() / (double) m;
        owners.get(owner)[1] += l.count() / (double) m;
      }
      System.out.println("by owner (package of the class), per cache:");
      owners.forEach((k, v) -> System.out.printf("  %8.1f B %7.2f obj  %s%n", v[0], v[1], k));
      System.out.println("by class, per cache:");
      for (Footprint.Line l : growth.top(80, m)) {
        System.out.printf("  %8.1f B %7.2f obj  %s%n", l.bytes() / (double) m, l.count() / (double) m, l.type());
      }
      caches.forEach(EndpointCache::close);
      regs.forEach(Registration::close);
    }
  }

  private static String owner(String type) {
    for (String p : new String[] {"dev.muster", "io.etcd.jetcd", "io.grpc.netty", "io.grpc", "io.netty",
        "io.vertx", "java.util.concurrent", "java.util", "java.lang", "java.time"}) {
      if (type.startsWith(p)) {
        return p;
      }
    }
    return type.contains("[]") ? "arrays (" + type + ")" : "other";
  }
}
