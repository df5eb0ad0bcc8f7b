package dev.muster.etcd.internal;

import dev.muster.registry.Names;
import java.util.Collection;
import java.util.Collections;
import java.util.HashMap;
import java.util.Map;
import java.util.Set;
import java.util.function.BiFunction;

/**
 * The keys under some namespaces of a registry layout, and the services they make: a service ({@code S}, made from
 * its namespace and name) is there while at least one key {@code ROOT/namespace/service/...} is. What the service
 * directory keeps of the registry (keys only, no values), fed by one listing and then by a watch's events.
 *
 * <p>Not thread-safe: the directory's thread alone uses it.
 */
public final class NamespaceKeys<S> {
  private final String root;
  private final BiFunction<String, String, S> make;
  private final Map<String, S> keys = new HashMap<>();
  private final Map<S, Integer> counts = new HashMap<>();

  /** Keys under {@code root} (the layout's root prefix, e.g. {@code /muster/}); {@code make} names a service. */
  public NamespaceKeys(String root, BiFunction<String, String, S> make) {
    this.root = root;
    this.make = make;
  }

  /** Holds exactly {@code all} (a listing's keys) from now on. */
  public void reset(Collection<String> all) {
    keys.clear();
    counts.clear();
    all.forEach(this::put);
  }

  /** A key was put: true when it made a service appear (its first key). A key outside the layout is ignored. */
  public boolean put(String key) {
    S s = serviceOf(key);
    if (s == null || keys.containsKey(key)) {
      return false;
    }
    keys.put(key, s);
    return counts.merge(s, 1, Integer::sum) == 1;
  }

  /** A key was deleted: true when it was its service's last. */
  public boolean delete(String key) {
    S s = keys.remove(key);
    if (s == null) {
      return false;
    }
    return counts.computeIfPresent(s, (k, n) -> n == 1 ? null : n - 1) == null;
  }

  /** The services with at least one key now. */
  public Set<S> services() {
    return Collections.unmodifiableSet(counts.keySet());
  }

  /** The service of {@code ROOT/namespace/service/...}, or null for a key outside the layout or with a bad name. */
  S serviceOf(String key) {
    if (!key.startsWith(root)) {
      return null;
    }
    int nsEnd = key.indexOf('/', root.length());
    int svcEnd = nsEnd < 0 ? -1 : key.indexOf('/', nsEnd + 1);
    if (svcEnd < 0) {
      return null;
    }
    String ns = key.substring(root.length(), nsEnd);
    String svc = key.substring(nsEnd + 1, svcEnd);
    return Names.isValid(ns) && Names.isValid(svc) ? make.apply(ns, svc) : null;
  }
}
