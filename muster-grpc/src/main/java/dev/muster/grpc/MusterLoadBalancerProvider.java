package dev.muster.grpc;

import dev.muster.MusterException;
import dev.muster.balance.BalancerConfig;
import dev.muster.balance.StalePolicy;
import dev.muster.health.ProbeConfig;
import dev.muster.outlier.OutlierConfig;
import io.grpc.LoadBalancer;
import io.grpc.LoadBalancerProvider;
import io.grpc.NameResolver.ConfigOrError;
import io.grpc.Status;
import java.math.BigDecimal;
import java.time.Duration;
import java.util.Locale;
import java.util.Map;
import java.util.Set;

/**
 * The {@code muster} load-balancing policy: Muster's own {@link dev.muster.balance.Balancer} (weights, zone
 * preference, {@code DRAINING}, panic routing) and {@link dev.muster.outlier.OutlierDetector} (local ejection) over
 * gRPC subchannels, one per instance. Listed in {@code META-INF/services/io.grpc.LoadBalancerProvider}; the
 * {@code muster:///} resolver proposes it in its service config, and a channel can also ask for it with
 * {@code defaultLoadBalancingPolicy("muster")}. It needs the {@code muster:///} resolver's addresses (they carry the
 * instances).
 *
 * <p>Its JSON config, every field optional: {@code {"policy": "weighted_random" | "round_robin" | "power_of_two",
 * "localZone": "eu-1a", "minLocalShare": 0.5, "outlierDetection": {"enabled": true,
 * "consecutiveLocalOriginFailure": 1, "consecutive5xx": 5, "baseEjectionTime": "30s", "maxEjectionTime": "300s",
 * "maxEjectionPercent": 50}, "healthyPanicThreshold": 50, "slowStartConfig": {"slowStartWindow": "10s",
 * "aggression": 1.0, "minWeightPercent": 10}, "maxStale": "30s", "stalePolicy": "FAIL_CLOSED" |
 * "KEEP_FAILING_ENDPOINTS_OUT", "probe": "grpc" | "grpc:SERVICE" | "tcp" | "http:/PATH", "probeInterval": "5s"}}
 * (all-down protection and slow start with Envoy's names, bounded staleness and active probes as every Muster
 * consumer has them: see {@link BalancerConfig} and {@link ProbeConfig}). The {@code muster:///} resolver proposes
 * {@code localZone}, {@code maxStale}, {@code stalePolicy} and {@code probe} from the target's parameters. The policy defaults to {@code weighted_random}, so static registry weights are honoured
 * (power of two choices compares load and ignores weights); the zone defaults to the target's {@code zone=}.
 *
 * <p>Thread-safe; stateless.
 */
public final class MusterLoadBalancerProvider extends LoadBalancerProvider {
  /** The policy name. */
  public static final String POLICY = "muster";

  private static final Set<String> FIELDS = Set.of("policy", "localZone", "minLocalShare", "outlierDetection",
      "healthyPanicThreshold", "slowStartConfig", "maxStale", "stalePolicy", "probe", "probeInterval");
  private static final Set<String> SLOW_START_FIELDS = Set.of("slowStartWindow", "aggression", "minWeightPercent");
  private static final Set<String> OUTLIER_FIELDS = Set.of("enabled", "consecutiveLocalOriginFailure",
      "consecutive5xx", "baseEjectionTime", "maxEjectionTime", "maxEjectionPercent");

  /** The parsed config: how to balance, when to eject, and how to probe (null: no probes). */
  record Config(BalancerConfig balancer, OutlierConfig outlier, ProbeConfig probe) {
    static Config defaults() {
      return new Config(BalancerConfig.builder().policy(BalancerConfig.Policy.WEIGHTED_RANDOM).build(),
          OutlierConfig.defaults(), null);
    }
  }

  @Override
  public boolean isAvailable() {
    return true;
  }

  @Override
  public int getPriority() {
    return 5;
  }

  @Override
  public String getPolicyName() {
    return POLICY;
  }

  @Override
  public LoadBalancer newLoadBalancer(LoadBalancer.Helper helper) {
    return new MusterLoadBalancer(helper);
  }

  @Override
  public ConfigOrError parseLoadBalancingPolicyConfig(Map<String, ?> json) {
    try {
      return ConfigOrError.fromConfig(parse(json));
    } catch (MusterException | IllegalArgumentException | ClassCastException e) {
      return ConfigOrError.fromError(Status.INVALID_ARGUMENT.withDescription("muster policy config " + json + ": "
          + e.getMessage()).withCause(e));
    }
  }

  static Config parse(Map<String, ?> json) {
    unknown(json, FIELDS, "");
    BalancerConfig.Builder b = BalancerConfig.builder().policy(BalancerConfig.Policy.WEIGHTED_RANDOM);
    if (json.get("policy") != null) {
      b.policy(BalancerConfig.Policy.valueOf(((String) json.get("policy")).toUpperCase(Locale.ROOT)));
    }
    if (json.get("localZone") != null) {
      b.localZone((String) json.get("localZone"));
    }
    if (json.get("minLocalShare") != null) {
      b.minLocalShare(((Number) json.get("minLocalShare")).doubleValue());
    }
    if (json.get("healthyPanicThreshold") != null) {
      b.healthyPanicThreshold(integer(json, "healthyPanicThreshold"));
    }
    @SuppressWarnings("unchecked")
    Map<String, ?> ss = (Map<String, ?>) json.get("slowStartConfig");
    if (ss != null) {
      unknown(ss, SLOW_START_FIELDS, "slowStartConfig.");
      b.slowStart(ss.get("slowStartWindow") == null ? Duration.ZERO : duration((String) ss.get("slowStartWindow")),
          ss.get("aggression") == null ? 1.0 : ((Number) ss.get("aggression")).doubleValue(),
          ss.get("minWeightPercent") == null ? 10 : integer(ss, "minWeightPercent"));
    }
    if (json.get("maxStale") != null || json.get("stalePolicy") != null) {
      b.maxStale(json.get("maxStale") == null ? null : duration((String) json.get("maxStale")),
          json.get("stalePolicy") == null ? StalePolicy.FAIL_CLOSED
              : StalePolicy.valueOf(((String) json.get("stalePolicy")).toUpperCase(Locale.ROOT)));
    }
    ProbeConfig probe = null;
    if (json.get("probe") != null) {
      probe = ProbeConfig.parse((String) json.get("probe"));
      if (json.get("probeInterval") != null) {
        probe = probe.withInterval(duration((String) json.get("probeInterval")));
      }
    } else if (json.get("probeInterval") != null) {
      throw new IllegalArgumentException("probeInterval without probe; give probe too, e.g. \"grpc\"");
    }
    OutlierConfig.Builder o = OutlierConfig.builder();
    @SuppressWarnings("unchecked")
    Map<String, ?> od = (Map<String, ?>) json.get("outlierDetection");
    if (od != null) {
      unknown(od, OUTLIER_FIELDS, "outlierDetection.");
      if (od.get("enabled") != null) {
        o.enabled((Boolean) od.get("enabled"));
      }
      if (od.get("consecutiveLocalOriginFailure") != null) {
        o.consecutiveLocalOriginFailure(integer(od, "consecutiveLocalOriginFailure"));
      }
      if (od.get("consecutive5xx") != null) {
        o.consecutive5xx(integer(od, "consecutive5xx"));
      }
      if (od.get("baseEjectionTime") != null) {
        o.baseEjectionTime(duration((String) od.get("baseEjectionTime")));
      }
      if (od.get("maxEjectionTime") != null) {
        o.maxEjectionTime(duration((String) od.get("maxEjectionTime")));
      }
      if (od.get("maxEjectionPercent") != null) {
        o.maxEjectionPercent(integer(od, "maxEjectionPercent"));
      }
    }
    return new Config(b.build(), o.build(), probe);
  }

  private static void unknown(Map<String, ?> json, Set<String> known, String prefix) {
    for (String key : json.keySet()) {
      if (!known.contains(key)) {
        throw new IllegalArgumentException("unknown field " + prefix + key + "; use " + known);
      }
    }
  }

  private static int integer(Map<String, ?> json, String field) {
    double d = ((Number) json.get(field)).doubleValue();
    if (d != Math.rint(d)) {
      throw new IllegalArgumentException(field + " " + d + " is not a whole number");
    }
    return (int) d;
  }

  /** A protobuf JSON duration: seconds with an {@code s}, e.g. {@code "30s"} or {@code "0.5s"}. */
  static Duration duration(String s) {
    if (!s.endsWith("s")) {
      throw new IllegalArgumentException("duration " + s + " must be seconds ending in s, e.g. \"30s\"");
    }
    BigDecimal seconds = new BigDecimal(s.substring(0, s.length() - 1));
    return Duration.ofNanos(seconds.movePointRight(9).longValueExact());
  }
}
