package dev.muster.bench.etcd;

import dev.muster.registry.Instance;
import dev.muster.registry.InstanceCodec;
import dev.muster.registry.RegistryLayout;
import io.etcd.jetcd.Client;

/**
 * The instances of the rows that need many of them in etcd (the bulk rows here, the memory section's cached
 * instances): instance {@code i} of a service is {@code 10.1.(i / 250).(i % 250):8080} with id {@code b%05d}, the
 * SPEC §2 shape with no zone, tags or metadata, written without a lease.
 *
 * <p>Stateless; the jetcd {@link Client} passed in is thread-safe.
 */
public final class BulkInstances {
  /** The keys and encoded values written, index for index. */
  public record Written(String[] keys, byte[][] values) {}

  private BulkInstances() {}

  public static Instance instance(String service, int i) {
    return Instance.of(service, "10.1." + (i / 250) + "." + (i % 250), 8080).id(String.format("b%05d", i));
  }

  /** Puts instances 0 to {@code n - 1} of {@code service} ({@link RawEtcd#putAll}: 10,000 take a second or two). */
  public static Written write(Client raw, RegistryLayout layout, String service, int n) {
    String[] keys = new String[n];
    byte[][] values = new byte[n][];
    for (int i = 0; i < n; i++) {
      Instance instance = instance(service, i);
      keys[i] = layout.instanceKey(instance);
      values[i] = InstanceCodec.encode(instance);
    }
    RawEtcd.putAll(raw, keys, values);
    return new Written(keys, values);
  }
}
