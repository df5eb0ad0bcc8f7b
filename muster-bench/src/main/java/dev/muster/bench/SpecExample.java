package dev.muster.bench;

import dev.muster.registry.Instance;
import dev.muster.registry.InstanceCodec;
import dev.muster.registry.InstanceKey;
import java.nio.charset.StandardCharsets;

/**
 * The registry value from SPEC §2 (zone, region, a tag, metadata, registeredAt) and instances built from it, so
 * every benchmark decodes and encodes the same typical value. Stateless.
 */
final class SpecExample {
  static final String SERVICE = "orders";

  static final InstanceKey KEY =
      new InstanceKey(Instance.DEFAULT_NAMESPACE, SERVICE, Instance.DEFAULT_VERSION, "orders-8080-3f2a1c");

  /** Byte for byte what {@link InstanceCodec#encode} writes for {@link #instance()}. */
  static final String VALUE = "{\"schema\":1,\"address\":\"10.0.0.7\",\"port\":8080,\"state\":\"UP\",\"weight\":100,"
      + "\"zone\":\"a\",\"region\":\"r1\",\"tags\":[\"canary\"],\"metadata\":{\"k\":\"v\"},"
      + "\"registeredAt\":\"2026-11-29T10:00:00Z\"}";

  private SpecExample() {}

  static byte[] value() {
    return VALUE.getBytes(StandardCharsets.UTF_8);
  }

  static Instance instance() {
    return InstanceCodec.decode(KEY, value());
  }

  /** The example as the {@code n}th instance of the service: its own id and address, everything else equal. */
  static Instance number(int n) {
    return instance().id(String.format("orders-%05d", n)).address("10.0." + (n / 256) + "." + (n % 256));
  }
}
