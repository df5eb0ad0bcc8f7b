package dev.muster.grpc;

import dev.muster.InvalidInputException;
import dev.muster.cache.CacheConfig;
import dev.muster.registry.Instance;
import dev.muster.registry.Names;
import java.net.URI;
import java.net.URLDecoder;
import java.nio.charset.StandardCharsets;
import java.util.HashMap;
import java.util.Map;
import java.util.Set;

/**
 * A parsed {@code muster:///SERVICE?namespace=NS&version=V&zone=Z} target. {@code namespace} and {@code version}
 * choose the registry prefix watched (defaults {@value Instance#DEFAULT_NAMESPACE} and
 * {@value Instance#DEFAULT_VERSION}); {@code zone} is this client's own zone, which the {@code muster} policy
 * prefers. An authority ({@code muster://host/...}) is refused: which etcd to ask is the provider's configuration.
 */
record MusterTarget(String service, String namespace, String version, String zone) {
  private static final Set<String> PARAMETERS = Set.of("namespace", "version", "zone");

  MusterTarget {
    Names.requireValid("service", service);
    Names.requireValid("namespace", namespace);
    Names.requireValid("version", version);
    if (zone != null) {
      Names.requireValid("zone", zone);
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
          throw new InvalidInputException("target", uri, "unknown parameter " + key + "; use namespace, version, zone");
        }
        query.put(key, value);
      }
    }
    return new MusterTarget(path.substring(1),
        query.getOrDefault("namespace", Instance.DEFAULT_NAMESPACE),
        query.getOrDefault("version", Instance.DEFAULT_VERSION),
        query.get("zone"));
  }

  CacheConfig cacheConfig() {
    return CacheConfig.builder(service).namespace(namespace).version(version).build();
  }

  private static String decode(String s) {
    return URLDecoder.decode(s, StandardCharsets.UTF_8);
  }
}
