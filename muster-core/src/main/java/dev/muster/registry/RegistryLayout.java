package dev.muster.registry;

import dev.muster.InvalidInputException;

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
    String namespace = keyPart(key, "namespace", from, serviceAt - 1);
    String service = keyPart(key, "service", serviceAt, versionAt - 1);
    String version = keyPart(key, "version", versionAt, idAt - 1);
    String id = keyPart(key, "instance id", idAt, key.length());
    return new InstanceKey(namespace, service, version, id);
  }

  private String expectedKey() {
    return "expected " + rootPrefix() + "{namespace}/{service}/{version}/{instanceId}";
  }

  private static String keyPart(String key, String field, int from, int to) {
    String part = key.substring(from, to);
    if (!Names.isValid(part)) {
      String problem = part.isEmpty() ? "is empty" : "\"" + part + "\" is not a valid name";
      throw new InvalidInputException("key", key, "its " + field + " part " + problem + "; " + Names.RULE);
    }
    return part;
  }
}
