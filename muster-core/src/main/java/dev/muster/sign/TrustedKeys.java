package dev.muster.sign;

import dev.muster.InvalidInputException;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collection;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;

/**
 * Which keys a consumer trusts to sign the records of which services: keys for a whole namespace and keys for one
 * service of a namespace. For a service, its own keys apply if any were given, else its namespace's (the most
 * specific scope wins, so a service can be restricted to its own key inside a namespace that trusts a team key);
 * a service with neither has no trusted key, and every record of it fails verification.
 *
 * <pre>{@code
 * TrustedKeys trust = TrustedKeys.builder()
 *     .namespace("default", TrustedKey.read(Path.of("team.pub")))
 *     .service("default", "payments", TrustedKey.read(Path.of("payments-2026.pub")),
 *         TrustedKey.read(Path.of("payments-2027.pub")))  // two at once while payments' providers rotate
 *     .build();
 * registry.watch(CacheConfig.builder("orders").trustedKeys(trust).build());
 * }</pre>
 *
 * <p>Names are compared exactly as they appear in etcd keys. {@link dev.muster.cache.CacheConfig} refuses trusted
 * keys that have none for its namespace and service, so a misspelt scope is caught when the cache is configured.
 * {@link #NONE} means "do not verify". An immutable value, safe to share between threads.
 */
public final class TrustedKeys {
  /** No trusted key: records are not verified. */
  public static final TrustedKeys NONE = new TrustedKeys(Map.of());

  private final Map<Scope, List<TrustedKey>> scopes;

  /** A namespace ({@code service} null) or one service of it. */
  private record Scope(String namespace, String service) {
    @Override
    public String toString() {
      return service == null ? namespace : namespace + "/" + service;
    }
  }

  private TrustedKeys(Map<Scope, List<TrustedKey>> scopes) {
    this.scopes = scopes;
  }

  public static Builder builder() {
    return new Builder();
  }

  /** True when no key is trusted anywhere ({@link #NONE}): records are not verified. */
  public boolean isEmpty() {
    return scopes.isEmpty();
  }

  /** The keys trusted for {@code service} of {@code namespace} (see the class comment); empty if none. */
  public List<TrustedKey> forService(String namespace, String service) {
    List<TrustedKey> own = scopes.get(new Scope(namespace, service));
    return own != null ? own : scopes.getOrDefault(new Scope(namespace, null), List.of());
  }

  @Override
  public boolean equals(Object o) {
    return o instanceof TrustedKeys other && scopes.equals(other.scopes);
  }

  @Override
  public int hashCode() {
    return scopes.hashCode();
  }

  /** E.g. {@code TrustedKeys[default: [5b58f33094e0ab5e], default/payments: [0c1d..., 9e8f...]]}. */
  @Override
  public String toString() {
    List<String> parts = new ArrayList<>();
    scopes.forEach((scope, keys) -> parts.add(scope + ": " + keys.stream().map(TrustedKey::keyId).toList()));
    return "TrustedKeys" + parts;
  }

  /** Collects scopes and their keys; giving a scope again adds to its keys. Not thread-safe. */
  public static final class Builder {
    private final Map<Scope, Set<TrustedKey>> scopes = new LinkedHashMap<>();

    private Builder() {}

    /** Trusts {@code keys} for every service of {@code namespace} that has no keys of its own. */
    public Builder namespace(String namespace, TrustedKey... keys) {
      return add(new Scope(name("namespace", namespace), null), list(keys));
    }

    /** As {@link #namespace(String, TrustedKey...)}, with a collection. */
    public Builder namespace(String namespace, Collection<TrustedKey> keys) {
      return add(new Scope(name("namespace", namespace), null), keys);
    }

    /** Trusts {@code keys} for {@code service} of {@code namespace}, instead of the namespace's keys. */
    public Builder service(String namespace, String service, TrustedKey... keys) {
      return add(new Scope(name("namespace", namespace), name("service", service)), list(keys));
    }

    /** As {@link #service(String, String, TrustedKey...)}, with a collection. */
    public Builder service(String namespace, String service, Collection<TrustedKey> keys) {
      return add(new Scope(name("namespace", namespace), name("service", service)), keys);
    }

    public TrustedKeys build() {
      Map<Scope, List<TrustedKey>> copy = new LinkedHashMap<>();
      scopes.forEach((scope, keys) -> copy.put(scope, List.copyOf(keys)));
      return copy.isEmpty() ? NONE : new TrustedKeys(Collections.unmodifiableMap(copy));
    }

    private Builder add(Scope scope, Collection<TrustedKey> keys) {
      if (keys == null || keys.isEmpty() || keys.stream().anyMatch(Objects::isNull)) {
        throw new InvalidInputException("trusted keys of " + scope, keys == null ? null : keys.toString(),
            "give at least one key, and no null");
      }
      scopes.computeIfAbsent(scope, s -> new LinkedHashSet<>()).addAll(keys);
      return this;
    }

    private static List<TrustedKey> list(TrustedKey[] keys) {
      return keys == null ? null : Arrays.asList(keys); // nulls reach add(), which names them
    }

    private static String name(String field, String value) {
      if (value == null || value.isBlank()) {
        throw new InvalidInputException(field, value, "give the " + field + " the keys are trusted for");
      }
      return value;
    }
  }
}
