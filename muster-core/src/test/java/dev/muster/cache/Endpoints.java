package dev.muster.cache;

import dev.muster.cache.internal.CacheRecord;
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
public final class Endpoints {
  public static final RegistryLayout LAYOUT = RegistryLayout.defaults();
  public static final String SERVICE = "orders";
  public static final String PREFIX = LAYOUT.servicePrefix("default", SERVICE);
  public static final Instant REGISTERED = Instant.parse("2026-11-29T10:00:00Z");

  private Endpoints() {}

  /** An UP instance of {@value #SERVICE} with id {@code id} (one letter ids read like the seed's A, B, C). */
  public static Instance instance(String id) {
    return Instance.of(SERVICE, "10.0.0.7", 8080).id(id).registeredAt(REGISTERED);
  }

  public static InstanceKey instanceKey(String id) {
    return instance(id).key();
  }

  public static String key(String id) {
    return LAYOUT.instanceKey(instance(id));
  }

  public static byte[] value(Instance instance) {
    return InstanceCodec.encode(instance);
  }

  public static CacheRecord put(String id, long modRevision) {
    return put(instance(id), modRevision);
  }

  public static CacheRecord put(Instance instance, long modRevision) {
    return CacheRecord.put(LAYOUT.instanceKey(instance), value(instance), modRevision);
  }

  public static CacheRecord delete(String id, long modRevision) {
    return CacheRecord.delete(key(id), modRevision);
  }

  /** The instance ids of {@code set}, sorted. */
  public static Set<String> ids(EndpointSet set) {
    Set<String> ids = new TreeSet<>();
    set.instances().forEach(i -> ids.add(i.id()));
    return ids;
  }
}
