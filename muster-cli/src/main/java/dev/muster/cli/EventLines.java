package dev.muster.cli;

import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.muster.registry.Instance;
import dev.muster.registry.RegistrationEvent;
import java.time.Duration;
import java.time.Instant;

/** The JSON lines of {@code muster register} and {@code muster ls --json} (SPEC §7). Stateless. */
final class EventLines {
  private EventLines() {}

  /**
   * {@code {"event":"registered","ts":"...","id":"...","service":"...","lease":123,"lease_hex":"7b",
   * "revision":42,"detail":"...","ttl_s":15}}; the lease also in hex because that is how etcdctl takes it;
   * {@code ttl_s} (the lease's TTL in seconds) only on events that know it.
   */
  static ObjectNode of(RegistrationEvent event, Instance instance) {
    return of(event, instance, null);
  }

  /**
   * As above, and on a keepalive {@code answered_us}: how long etcd took to answer it, in microseconds, when
   * {@code keepaliveAnsweredIn} gives it ({@code muster register --log-keepalives} passes what the registrar's
   * keepalive observer was told just before the event; the public event does not carry it).
   */
  static ObjectNode of(RegistrationEvent event, Instance instance, Duration keepaliveAnsweredIn) {
    ObjectNode node = JsonLines.event(event.type().wireName(), event.ts());
    node.put("id", event.id());
    node.put("service", instance.service());
    node.put("lease", event.lease());
    node.put("lease_hex", Long.toHexString(event.lease()));
    node.put("revision", event.revision());
    node.put("detail", event.detail());
    if (!event.ttl().isZero()) {
      node.put("ttl_s", event.ttl().toSeconds());
    }
    if (event.type() == RegistrationEvent.Type.KEEPALIVE && keepaliveAnsweredIn != null) {
      node.put("answered_us", keepaliveAnsweredIn.toNanos() / 1_000);
    }
    return node;
  }

  /** One instance of a listing at {@code revision}: {@code {"event":"instance",...,"revision":N}}. */
  static ObjectNode of(Instance instance, long revision, Instant now) {
    ObjectNode node = JsonLines.event("instance", now);
    describe(node, instance);
    node.put("revision", revision);
    return node;
  }

  /** Writes an instance's fields (SPEC §7's instance object) into {@code node}; returns it. */
  static ObjectNode describe(ObjectNode node, Instance instance) {
    node.put("id", instance.id());
    node.put("namespace", instance.namespace());
    node.put("service", instance.service());
    node.put("version", instance.version());
    node.put("address", instance.address());
    node.put("port", instance.port());
    node.put("state", instance.state().name());
    node.put("weight", instance.weight());
    node.put("zone", instance.zone());
    node.put("region", instance.region());
    ArrayNode tags = node.putArray("tags");
    instance.tags().forEach(tags::add);
    ObjectNode metadata = node.putObject("metadata");
    instance.metadata().forEach(metadata::put);
    return node;
  }

  /** A key under the prefix whose value did not decode: {@code {"event":"malformed","key":...,"reason":...}}. */
  static ObjectNode malformed(String key, String reason, long revision, Instant now) {
    ObjectNode node = JsonLines.event("malformed", now);
    node.put("key", key);
    node.put("reason", reason);
    node.put("revision", revision);
    return node;
  }
}
