package dev.muster.cache;

import dev.muster.cache.internal.CacheRecord;
import dev.muster.registry.Instance;
import dev.muster.registry.InstanceCodec;
import dev.muster.registry.InstanceKey;
import dev.muster.registry.RegistryLayout;
import java.time.Instant;
import java.util.Random;
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

  /**
   * A valid name from a few characters, so that prefixes, equal segments and {@code '-'} (which sorts before the
   * path's {@code '/'}) come up often: for the order's tests.
   */
  public static String trickyName(Random random) {
    StringBuilder s = new StringBuilder().append("ab1".charAt(random.nextInt(3)));
    int more = random.nextInt(4);
    for (int i = 0; i < more; i++) {
      s.append("ab1-".charAt(random.nextInt(4)));
    }
    if (s.charAt(s.length() - 1) == '-') {
      s.append('b');
    }
    return s.toString();
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
