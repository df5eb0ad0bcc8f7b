package dev.muster.cache;

import dev.muster.registry.Instance;
import dev.muster.registry.InstanceCodec;
import dev.muster.registry.InstanceKey;
import dev.muster.registry.RegistryLayout;
import java.time.Instant;
import java.util.Set;
import java.util.TreeSet;

/**
 * Test fixtures for the cache tests: instances of service {@value #SERVICE} in namespace {@code default}, real
 * registry values ({@link InstanceCodec#encode}) and real keys ({@link RegistryLayout#instanceKey}).
 */
final class Endpoints {
  static final RegistryLayout LAYOUT = RegistryLayout.defaults();
  static final String SERVICE = "orders";
  static final String PREFIX = LAYOUT.servicePrefix("default", SERVICE);
  static final Instant REGISTERED = Instant.parse("2026-11-29T10:00:00Z");

  private Endpoints() {}

  /** An UP instance of {@value #SERVICE} with id {@code id} (one letter ids read like the seed's A, B, C). */
  static Instance instance(String id) {
    return Instance.of(SERVICE, "10.0.0.7", 8080).id(id).registeredAt(REGISTERED);
  }

  static InstanceKey instanceKey(String id) {
    return instance(id).key();
  }

  static String key(String id) {
    return LAYOUT.instanceKey(instance(id));
  }

  static byte[] value(Instance instance) {
    return InstanceCodec.encode(instance);
  }

  static CacheRecord put(String id, long modRevision) {
    return put(instance(id), modRevision);
  }

  static CacheRecord put(Instance instance, long modRevision) {
    return CacheRecord.put(LAYOUT.instanceKey(instance), value(instance), modRevision);
  }

  static CacheRecord delete(String id, long modRevision) {
    return CacheRecord.delete(key(id), modRevision);
  }

  /** The instance ids of {@code set}, sorted. */
  static Set<String> ids(EndpointSet set) {
    Set<String> ids = new TreeSet<>();
    set.instances().forEach(i -> ids.add(i.id()));
    return ids;
  }
}
