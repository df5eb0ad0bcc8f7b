import dev.muster.cache.CacheConfig;
import dev.muster.cache.EndpointCache;
import dev.muster.etcd.EtcdConfig;
import dev.muster.etcd.EtcdRegistry;
import dev.muster.registry.Instance;
import dev.muster.registry.Registration;
import dev.muster.testing.EtcdBinary;
import dev.muster.testing.EtcdCluster;
import dev.muster.testing.EtcdMember;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

/**
 * When today's client replacements happen in a storm (docs/design-storms.md, open question 2). N caches of one
 * service on one EtcdRegistry (so one connection), a provider on a second registry; etcd SIGKILLed for OUTAGE
 * seconds, then restarted, ROUNDS times. Prints per round the registry's client replacements up to the kill,
 * during the outage (kill until the restarted member answers /version, as EtcdMember.restart waits), and from then until every cache is fresh again, with the
 * time that took. A source-file program, not part of the bench:
 *
 * <pre>
 * java -cp muster-bench/target/muster-bench.jar muster-bench/probe/ReplacementTimelineProbe.java .cache/etcd/default/usr/bin/etcd 2500 5 3
 * </pre>
 * etcd runs under muster-testing's {@link EtcdCluster} (one member, etcd's default timings), stopped by pid on close.
 */
public class ReplacementTimelineProbe {
  public static void main(String[] args) throws Exception {
    if (args.length != 4) {
      System.err.println("usage: ReplacementTimelineProbe ETCD_BIN CACHES OUTAGE_S ROUNDS (e.g. ... 2500 5 3)");
      System.exit(2);
    }
    Path binary = Path.of(args[0]);
    int caches = Integer.parseInt(args[1]);
    int outageSeconds = Integer.parseInt(args[2]);
    int rounds = Integer.parseInt(args[3]);
    try (EtcdCluster etcd = EtcdCluster.builder().binary(binary).build().start();
         EtcdRegistry provider = EtcdRegistry.connect(EtcdConfig.of(etcd.endpointsString()));
         EtcdRegistry consumers = EtcdRegistry.connect(EtcdConfig.of(etcd.endpointsString()))) {
      EtcdMember member = etcd.member(0);
      Registration registration = provider.register(Instance.of("probe", "127.0.0.1", 8080));
      CacheConfig config = CacheConfig.builder("probe").build();
      List<EndpointCache> all = new ArrayList<>();
      for (int i = 0; i < caches; i++) {
        all.add(consumers.watch(config));
      }
      long until = System.nanoTime() + 60_000_000_000L;
      while (all.stream().anyMatch(c -> c.isStale() || c.current().size() != 1)) {
        if (System.nanoTime() > until) {
          throw new IllegalStateException("the caches did not see the provider within 60 s");
        }
        Thread.sleep(50);
      }
      System.out.println("etcd Version: " + EtcdBinary.version(binary).orElseThrow() + "; " + caches + " caches of one"
          + " service on one registry (one connection); etcd SIGKILLed for " + outageSeconds + " s; default CacheConfig");
      System.out.println("round  replacements: before the kill / during the outage / after etcd answered"
          + "   every cache fresh (ms after etcd answered)");
      for (int round = 1; round <= rounds; round++) {
        long atKill = consumers.reconnects();
        member.kill(); // SIGKILL, by pid
        Thread.sleep(outageSeconds * 1000L);
        member.restart(); // returns once the member answers /version
        long answered = System.nanoTime();
        long atAnswer = consumers.reconnects();
        long limit = answered + 60_000_000_000L;
        while (all.stream().anyMatch(EndpointCache::isStale) && System.nanoTime() < limit) {
          Thread.sleep(10);
        }
        long fresh = System.nanoTime();
        long stale = all.stream().filter(EndpointCache::isStale).count();
        System.out.printf("%5d  %d / %d / %d   %s%n", round, atKill, atAnswer - atKill,
            consumers.reconnects() - atAnswer,
            stale == 0 ? String.valueOf((fresh - answered) / 1_000_000) : stale + " still stale after 60 s");
        Thread.sleep(3000); // let the registration's keepalives settle before the next kill
      }
      registration.close();
    }
  }
}
