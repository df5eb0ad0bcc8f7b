package dev.muster.grpc;

import dev.muster.Durations;
import dev.muster.InvalidInputException;
import dev.muster.balance.StalePolicy;
import dev.muster.cache.CacheConfig;
import dev.muster.health.ProbeConfig;
import dev.muster.registry.Instance;
import dev.muster.registry.Names;
import dev.muster.sign.TrustedKey;
import dev.muster.sign.TrustedKeys;
import java.net.URI;
import java.net.URLDecoder;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;

/**
 * A parsed {@code muster:///SERVICE?namespace=NS&version=V&zone=Z&maxStale=D&stalePolicy=P&probe=SPEC} target.
 * {@code namespace} and {@code version} choose the registry prefix watched (defaults
 * {@value Instance#DEFAULT_NAMESPACE} and {@value Instance#DEFAULT_VERSION}); {@code zone} is this client's own zone,
 * which the {@code muster} policy prefers; {@code maxStale} ({@code 30s}, {@code 500ms}), {@code stalePolicy}
 * ({@code FAIL_CLOSED}, {@code KEEP_FAILING_ENDPOINTS_OUT}), {@code probe} ({@code grpc}, {@code grpc:SERVICE},
 * {@code tcp}, {@code http:/PATH}), {@code probeInterval} and {@code slowStart} (a window, e.g. {@code 30s}) go into
 * the policy's config, as {@code muster call}'s flags of those names. An
 * authority ({@code muster://host/...}) is refused: which etcd to ask is the provider's configuration.
 */
record MusterTarget(String service, String namespace, String version, String zone, Duration maxStale,
    StalePolicy stalePolicy, String probe, Duration probeInterval, Duration slowStart) {
  private static final Set<String> PARAMETERS = Set.of("namespace", "version", "zone", "maxStale", "stalePolicy",
      "probe", "probeInterval", "slowStart");

  MusterTarget {
    Names.requireValid("service", service);
    Names.requireValid("namespace", namespace);
    Names.requireValid("version", version);
    if (zone != null) {
      Names.requireValid("zone", zone);
    }
    if (probe != null) {
      ProbeConfig.parse(probe); // refused here with what is accepted, not at the first result
    } else if (probeInterval != null) {
      throw new InvalidInputException("probeInterval", probeInterval, "give probe too, e.g. probe=grpc");
    }
  }

  static MusterTarget parse(URI uri) {
    if (uri.getAuthority() != null && !uri.getAuthority().isEmpty()) {
      throw new InvalidInputException("target", uri, "use muster:///SERVICE (no authority: etcd is configured on the"
          + " provider, e.g. by MUSTER_ENDPOINTS)");
    }
    String path = uri.getPath();
    if (path == null || !path.startsWith("/") || path.length() < 2 || path.indexOf('/', 1) >= 0) {
      throw new InvalidInputException("target", uri, "use muster:///SERVICE[?namespace=..&version=..&zone=..]");
    }
    Map<String, String> query = new HashMap<>();
    String raw = uri.getRawQuery();
    if (raw != null && !raw.isEmpty()) {
      for (String pair : raw.split("&")) {
        int eq = pair.indexOf('=');
        String key = decode(eq < 0 ? pair : pair.substring(0, eq));
        String value = eq < 0 ? "" : decode(pair.substring(eq + 1));
        if (!PARAMETERS.contains(key)) {
          throw new InvalidInputException("target", uri, "unknown parameter " + key + "; use " + new TreeSet<>(PARAMETERS));
        }
        query.put(key, value);
      }
    }
    String maxStale = query.get("maxStale");
    String stalePolicy = query.get("stalePolicy");
    StalePolicy policy;
    try {
      policy = stalePolicy == null ? null : StalePolicy.valueOf(stalePolicy.toUpperCase(java.util.Locale.ROOT));
    } catch (IllegalArgumentException e) {
      throw new InvalidInputException("stalePolicy", stalePolicy, "use FAIL_CLOSED or KEEP_FAILING_ENDPOINTS_OUT");
    }
    return new MusterTarget(path.substring(1),
        query.getOrDefault("namespace", Instance.DEFAULT_NAMESPACE),
        query.getOrDefault("version", Instance.DEFAULT_VERSION),
        query.get("zone"),
        maxStale == null ? null : Durations.parse("maxStale", maxStale),
        policy,
        query.get("probe"),
        query.get("probeInterval") == null ? null : Durations.parse("probeInterval", query.get("probeInterval")),
        query.get("slowStart") == null ? null : Durations.parse("slowStart", query.get("slowStart")));
  }

  /**
   * The {@code muster} policy's config this target proposes: {@code localZone}, {@code maxStale},
   * {@code stalePolicy}, {@code probe} when given.
   */
  Map<String, ?> policyConfig() {
    Map<String, Object> policy = new java.util.LinkedHashMap<>();
    if (zone != null) {
      policy.put("localZone", zone);
    }
    if (maxStale != null) {
      policy.put("maxStale", seconds(maxStale));
    }
    if (stalePolicy != null) {
      policy.put("stalePolicy", stalePolicy.name());
    }
    if (probe != null) {
      policy.put("probe", probe);
    }
    if (probeInterval != null) {
      policy.put("probeInterval", seconds(probeInterval));
    }
    if (slowStart != null) {
      policy.put("slowStartConfig", Map.of("slowStartWindow", seconds(slowStart)));
    }
    return policy;
  }

  /** A protobuf JSON duration, {@code "0.5s"}. */
  private static String seconds(Duration d) {
    return new java.math.BigDecimal(d.toNanos()).movePointLeft(9).stripTrailingZeros().toPlainString() + "s";
  }

  CacheConfig cacheConfig() {
    return cacheConfig(List.of());
  }

  /** The cache of this target, serving only records signed by one of {@code trusted} (none: not checked). */
  CacheConfig cacheConfig(List<TrustedKey> trusted) {
    CacheConfig.Builder b = CacheConfig.builder(service).namespace(namespace).version(version);
    if (!trusted.isEmpty()) {
      b.trustedKeys(TrustedKeys.builder().service(namespace, service, trusted).build());
    }
    return b.build();
  }

  private static String decode(String s) {
    return URLDecoder.decode(s, StandardCharsets.UTF_8);
  }
}
