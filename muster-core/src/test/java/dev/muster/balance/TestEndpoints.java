package dev.muster.balance;

import dev.muster.cache.EndpointSet;
import dev.muster.outlier.OutlierConfig;
import dev.muster.outlier.OutlierDetector;
import dev.muster.registry.Instance;
import dev.muster.registry.InstanceState;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.SplittableRandom;
import java.util.function.Consumer;

/** Fixtures: instances of service {@code orders} with one-letter ids, sets, and balancers on a fake ticker. */
public final class TestEndpoints {
  private static long revision = 1;

  private TestEndpoints() {}

  /** An UP instance with weight 100 and no zone. */
  public static Instance instance(String id) {
    return Instance.of("orders", "10.0.0.7", 8080).id(id).registeredAt(null);
  }

  public static Instance instance(String id, String zone) {
    return instance(id).zone(zone);
  }

  public static Instance draining(String id) {
    return instance(id).state(InstanceState.DRAINING);
  }

  /** Registered but not ready ({@code STARTING}). */
  public static Instance starting(String id) {
    return instance(id).state(InstanceState.STARTING);
  }

  public static EndpointSet set(Instance... instances) {
    return EndpointSet.of(revision++, List.of(instances));
  }

  /** An outlier config that ejects after one local-origin failure, for 30 s, up to 100 % of the endpoints. */
  public static OutlierConfig ejectAll() {
    return OutlierConfig.builder().maxEjectionPercent(100).baseEjectionTime(Duration.ofSeconds(30)).build();
  }

  /** A balancer on {@code ticker} with a seeded random generator. */
  public static Balancer balancer(BalancerConfig config, OutlierConfig outliers, FakeTicker ticker, long seed,
      Consumer<Instance> onRemoved) {
    SplittableRandom random = new SplittableRandom(seed);
    return new Balancer(config, new OutlierDetector(outliers, ticker), ticker, () -> random, onRemoved);
  }

  public static Balancer balancer(BalancerConfig config, FakeTicker ticker) {
    return balancer(config, OutlierConfig.defaults(), ticker, 42, null);
  }

  /** The ids of {@code n} picks, in order. */
  public static List<String> picks(Balancer balancer, int n) {
    List<String> ids = new ArrayList<>();
    for (int i = 0; i < n; i++) {
      ids.add(balancer.pick().instance().id());
    }
    return ids;
  }
}
