package dev.muster.registry;

import dev.muster.InvalidInputException;
import java.util.function.Function;

/**
 * Where instances live in etcd (SPEC §2): {@code /{root}/{namespace}/{service}/{version}/{instanceId}}. Every
 * prefix ends with '/', so the prefix of service {@code api} never matches {@code api-gw}. An immutable value.
 *
 * @param root the first key segment, a valid {@linkplain Names name}; {@value #DEFAULT_ROOT} by default
 */
public record RegistryLayout(String root) {
  public static final String DEFAULT_ROOT = "muster";

  private static final RegistryLayout DEFAULTS = new RegistryLayout(DEFAULT_ROOT);

  public RegistryLayout {
    Names.requireValid("root", root);
  }

  /** The layout with root {@value #DEFAULT_ROOT}. */
  public static RegistryLayout defaults() {
    return DEFAULTS;
  }

  /** {@code /{root}/}: everything Muster stores. */
  public String rootPrefix() {
    return '/' + root + '/';
  }

  /** {@code /{root}/{namespace}/}. */
  public String namespacePrefix(String namespace) {
    return rootPrefix() + Names.requireValid("namespace", namespace) + '/';
  }

  /** {@code /{root}/{namespace}/{service}/}: a service's watch prefix, all versions. */
  public String servicePrefix(String namespace, String service) {
    return namespacePrefix(namespace) + Names.requireValid("service", service) + '/';
  }

  /** {@code /{root}/{namespace}/{service}/{version}/}: one version's watch prefix. */
  public String versionPrefix(String namespace, String service, String version) {
    return servicePrefix(namespace, service) + Names.requireValid("version", version) + '/';
  }

  /** {@code /{root}/{namespace}/{service}/{version}/{id}}. */
  public String instanceKey(InstanceKey key) {
    return rootPrefix() + key.path();
  }

  /** The key {@code instance} is registered under. */
  public String instanceKey(Instance instance) {
    return instanceKey(instance.key());
  }

  /**
   * The identity encoded in an instance key of this layout.
   *
   * @throws InvalidInputException (field {@code key}) if the key is not under {@link #rootPrefix()}, does not have
   *     exactly four segments after it, or a segment is not a valid name
   */
  public InstanceKey parseKey(String key) {
    return parse(key, null);
  }

  /**
   * A parser for one reader of many keys, such as a cache: it accepts, rejects and words its errors exactly as
   * {@link #parseKey}, but the keys it returns share their namespace, service and version strings. The first key
   * with a given segment (up to eight distinct ones) keeps a copy of it; every later key that
   * has the same segment gets that very {@code String}, checked in place, not a copy of its own. A cache watches
   * one namespace and service and sees a few versions, so its instances hold only their id (and their value's
   * strings) each. Not thread-safe: one parser per thread, or per cache.
   */
  public Function<String, InstanceKey> keyParser() {
    KnownSegments known = new KnownSegments();
    return key -> parse(key, known);
  }

  private InstanceKey parse(String key, KnownSegments known) {
    // Index arithmetic rather than split: every PUT a cache applies has its key parsed (JFR, ApplyBenchmark).
    int from = root.length() + 2; // after "/{root}/"
    if (key == null || key.length() < from || key.charAt(0) != '/' || !key.startsWith(root, 1)
        || key.charAt(from - 1) != '/') {
      throw new InvalidInputException("key", key, expectedKey());
    }
    int serviceAt = key.indexOf('/', from) + 1;
    int versionAt = serviceAt == 0 ? 0 : key.indexOf('/', serviceAt) + 1;
    int idAt = versionAt == 0 ? 0 : key.indexOf('/', versionAt) + 1;
    if (idAt == 0 || key.indexOf('/', idAt) >= 0) {
      throw new InvalidInputException("key", key, expectedKey());
    }
    String namespace = keyPart(key, "namespace", from, serviceAt - 1, known);
    String service = keyPart(key, "service", serviceAt, versionAt - 1, known);
    String version = keyPart(key, "version", versionAt, idAt - 1, known);
    String id = keyPart(key, "instance id", idAt, key.length(), null); // ids are unique: nothing to share
    return new InstanceKey(namespace, service, version, id);
  }

  private String expectedKey() {
    return "expected " + rootPrefix() + "{namespace}/{service}/{version}/{instanceId}";
  }

  /** {@code key}'s segment [from, to), checked; one of {@code known}'s strings if it is one (null: none). */
  private static String keyPart(String key, String field, int from, int to, KnownSegments known) {
    String shared = known == null ? null : known.find(key, from, to);
    if (shared != null) {
      return shared; // it was a valid name when it was kept, and it is the same characters
    }
    if (!Names.isValid(key, from, to)) {
      String part = key.substring(from, to);
      String problem = part.isEmpty() ? "is empty" : "\"" + part + "\" is not a valid name";
      throw new InvalidInputException("key", key, "its " + field + " part " + problem + "; " + Names.RULE);
    }
    String part = key.substring(from, to);
    if (known != null) {
      known.keep(part);
    }
    return part;
  }

  /**
   * The segment strings one {@link #keyParser()} has kept, at most {@value #MAX}: a namespace, a service and a few
   * versions, looked up by a scan (cheaper than hashing a substring that would have to be made first). Once full it
   * keeps no more, so a stream of ever new versions costs a copy per key, as {@link #parseKey} does, not memory.
   */
  private static final class KnownSegments {
    static final int MAX = 8;

    private String[] strings = new String[4]; // a namespace, a service, a version or two; grown to MAX if need be
    private int count;

    String find(String key, int from, int to) {
      int length = to - from;
      for (int i = 0; i < count; i++) {
        String s = strings[i];
        if (s.length() == length && key.regionMatches(from, s, 0, length)) {
          return s;
        }
      }
      return null;
    }

    void keep(String segment) {
      if (count == strings.length && count < MAX) {
        strings = java.util.Arrays.copyOf(strings, MAX);
      }
      if (count < MAX) {
        strings[count++] = segment;
      }
    }
  }
}
