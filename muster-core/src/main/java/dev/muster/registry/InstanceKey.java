package dev.muster.registry;

/**
 * The identity part of an instance, as it appears in the etcd key
 * {@code /{root}/{namespace}/{service}/{version}/{id}}. Every part is a valid {@linkplain Names name}; an immutable
 * value. Build the full key with {@link RegistryLayout#instanceKey(InstanceKey)}.
 */
public record InstanceKey(String namespace, String service, String version, String id) {
  public InstanceKey {
    Names.requireValid("namespace", namespace);
    Names.requireValid("service", service);
    Names.requireValid("version", version);
    Names.requireValid("instance id", id);
  }

  /** {@code namespace/service/version/id}: the key without its root, used in messages. */
  public String path() {
    return namespace + '/' + service + '/' + version + '/' + id;
  }
}
