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
    String expected = "expected " + rootPrefix() + "{namespace}/{service}/{version}/{instanceId}";
    if (key == null || key.isEmpty() || !key.startsWith(rootPrefix())) {
      throw new InvalidInputException("key", key, expected);
    }
    String[] parts = key.substring(rootPrefix().length()).split("/", -1);
    if (parts.length != 4) {
      throw new InvalidInputException("key", key, expected);
    }
    String[] fields = {"namespace", "service", "version", "instance id"};
    for (int i = 0; i < parts.length; i++) {
      if (!Names.isValid(parts[i])) {
        String part = parts[i].isEmpty() ? "is empty" : "\"" + parts[i] + "\" is not a valid name";
        throw new InvalidInputException("key", key, "its " + fields[i] + " part " + part + "; " + Names.RULE);
      }
    }
    return new InstanceKey(parts[0], parts[1], parts[2], parts[3]);
  }
}
