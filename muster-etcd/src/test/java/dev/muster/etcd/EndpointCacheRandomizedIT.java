package dev.muster.etcd;

import static org.assertj.core.api.Assertions.assertThat;

import dev.muster.cache.CacheConfig;
import dev.muster.cache.EndpointCache;
import dev.muster.testing.EtcdCluster;
import dev.muster.testing.FaultProxy;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import java.util.UUID;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * A seeded random schedule of puts, deletes, cuts, compactions and etcd restarts; after each step, at a quiet
 * point, the cache must equal etcd. CI runs the fixed seeds listed as {@code cache-it} in {@code chaos-seeds.txt}
 * at the top of the repository (150304528172 found etcd 18089); {@code -Dmuster.seed=N} runs seed N instead.
 * Random seeds belong to {@code ./muster chaos}, which checks more invariants on many more schedules.
 */
@Timeout(value = 5, unit = TimeUnit.MINUTES)
@Tag("etcd-versions") // also run on etcd 3.4.23: see the etcd-3.4 failsafe execution
class EndpointCacheRandomizedIT {
  @RegisterExtension
  static EtcdCluster etcd = EtcdCluster.builder().members(1).build();

  private static final int STEPS = 24;

  static List<Long> seeds() {
    Long one = Long.getLong("muster.seed");
    if (one != null) {
      return List.of(one);
    }
    for (Path d = Path.of("").toAbsolutePath(); d != null; d = d.getParent()) {
      Path file = d.resolve("chaos-seeds.txt");
      if (Files.isRegularFile(file)) {
        try {
          return Files.readAllLines(file).stream().map(l -> l.replaceAll("#.*", "").trim())
              .filter(l -> l.startsWith("cache-it ")).map(l -> Long.parseLong(l.split("\\s+")[2])).toList();
        } catch (IOException e) {
          throw new UncheckedIOException(e);
        }
      }
    }
    throw new IllegalStateException("chaos-seeds.txt not found above " + Path.of("").toAbsolutePath());
  }

  @ParameterizedTest(name = "seed {0}")
  @MethodSource("seeds")
  void aRandomScheduleOfWritesAndFaultsNeverLeavesTheCacheDifferentFromEtcd(long seed) {
    System.out.println("EndpointCacheRandomizedIT seed=" + seed + " (replay with -Dmuster.seed=" + seed + ")");
    Random random = new Random(seed);
    String service = "svc-" + UUID.randomUUID().toString().substring(0, 8);
    List<String> history = new ArrayList<>();
    try (FaultProxy proxy = FaultProxy.to(etcd.member(0).clientUrl());
         PlainEtcdWriter registry = new PlainEtcdWriter(etcd.endpoints(), service);
         EtcdRegistry muster = EtcdRegistry.connect(EtcdConfig.of(proxy.uri().toString()))) {
      EndpointCache cache = muster.watch(CacheConfig.builder(service).pageSize(7)
          .progressInterval(Duration.ofSeconds(1)).progressTimeout(Duration.ofSeconds(1))
          .backoff(Duration.ofMillis(50), Duration.ofSeconds(1)).build());
      assertThat(cache.awaitReady(Duration.ofSeconds(20))).isTrue();
      long last = 0;
      for (int step = 0; step < STEPS; step++) {
        int op = random.nextInt(10);
        switch (op) {
          case 0, 1, 2 -> {
            last = writes(registry, random, 1 + random.nextInt(5));
            history.add("writes");
          }
          case 3, 4 -> {
            proxy.cut();
            sleep(random.nextInt(800));
            last = writes(registry, random, random.nextInt(4));
            proxy.pass();
            history.add("cut");
          }
          case 5 -> {
            proxy.cut();
            last = Math.max(last, writes(registry, random, 1 + random.nextInt(3)));
            registry.compact();
            proxy.pass();
            history.add("cut+compact");
          }
          case 6 -> {
            registry.compact();
            history.add("compact");
          }
          case 7 -> {
            etcd.member(0).kill();
            sleep(200 + random.nextInt(1500));
            etcd.member(0).restart();
            last = writes(registry, random, 1 + random.nextInt(3));
            history.add("restart");
          }
          default -> {
            proxy.latency(Duration.ofMillis(random.nextInt(200)));
            last = writes(registry, random, 1 + random.nextInt(3));
            proxy.pass();
            history.add("latency");
          }
        }
        last = Math.max(last, registry.revision());
        final int at = step;
        try {
          registry.awaitMatches(cache, last, Duration.ofSeconds(40));
        } catch (RuntimeException | AssertionError e) {
          throw new AssertionError("seed=" + seed + ": after step " + at + " " + history + " the cache (revision "
              + cache.revision() + ", " + cache.current().size() + " instances) differs from etcd (revision " + last
              + ", " + registry.at(0).size() + " instances)", e);
        }
      }
      System.out.println("seed=" + seed + " steps " + history + ": resyncs " + cache.resyncCount()
          + ", final revision " + cache.revision() + ", " + cache.current().size() + " instances");
    }
  }

  private static long writes(PlainEtcdWriter registry, Random random, int count) {
    long last = 0;
    for (int i = 0; i < count; i++) {
      int n = random.nextInt(30);
      last = random.nextInt(3) == 0 ? registry.delete(registry.instance(n)) : registry.put(registry.instance(n));
    }
    return last;
  }

  private static void sleep(long millis) {
    try {
      Thread.sleep(millis);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IllegalStateException(e);
    }
  }
}
