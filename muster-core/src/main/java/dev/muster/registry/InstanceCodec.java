package dev.muster.registry;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.muster.ErrorCode;
import dev.muster.InvalidInputException;
import dev.muster.MalformedValueException;
import dev.muster.MusterException;
import dev.muster.internal.Json;
import dev.muster.sign.RecordSignature;
import dev.muster.sign.SigningKey;
import java.time.Instant;
import java.util.Objects;

/**
 * Converts an {@link Instance} to and from the registry value (SPEC §2): one UTF-8 JSON object of at most
 * {@value #MAX_VALUE_BYTES} bytes,
 * {@code {"schema":1,"address":"10.0.0.7","port":8080,"state":"UP","weight":100,"zone":"a","region":"r1",
 * "tags":["canary"],"metadata":{"k":"v"},"registeredAt":"2026-11-29T10:00:00Z"}}. The identity (namespace,
 * service, version, id) is in the key, not in the value. Stateless and thread-safe.
 *
 * <p>Writing: fields in the order above; {@code zone}, {@code region} and {@code registeredAt} are left out when
 * null; {@code registeredAt} is ISO-8601 in UTC, with fractional seconds only when the instant has them.
 *
 * <p>Reading is forward compatible and otherwise strict:
 * <ul>
 *   <li>unknown fields are ignored; a {@code schema} above {@value #SCHEMA} is decoded the same way (later schemas
 *       may only add fields); a missing {@code schema} means {@value #SCHEMA}; a {@code schema} that is not a
 *       positive integer is an error;
 *   <li>{@code address} (string) and {@code port} (integer) are required; {@code state} defaults to {@code UP},
 *       {@code weight} to {@value Instance#DEFAULT_WEIGHT}, {@code tags} and {@code metadata} to empty,
 *       {@code zone}, {@code region} and {@code registeredAt} to null; a JSON {@code null} counts as absent;
 *   <li>wrong types, an unknown {@code state}, a duplicated field, trailing data, invalid UTF-8, a value over
 *       {@value #MAX_VALUE_BYTES} bytes and every rule of {@link Instance} are errors.
 * </ul>
 *
 * <p>A signed value ({@link #encodeSigned}) has one more member, {@code "sig2"} (and {@code "sig"} while a provider
 * also signs for Muster 0.1's consumers), which {@link #decode} ignores like any unknown field; checking it is
 * {@link RecordSignature#verify}'s job.
 */
public final class InstanceCodec {
  /** The schema version this code writes. */
  public static final int SCHEMA = 1;

  /** The largest value, in bytes, that is written or read (16 KiB). */
  public static final int MAX_VALUE_BYTES = 16 * 1024;

  private InstanceCodec() {}

  /**
   * The value to store under {@code instance}'s key.
   *
   * @throws InvalidInputException (field {@code value}) if the encoding exceeds {@value #MAX_VALUE_BYTES} bytes,
   *     since consumers would refuse it
   */
  public static byte[] encode(Instance instance) {
    return requireFits(instance, encodeUnchecked(instance));
  }

  /**
   * The value to store under {@code etcdKey} (the instance's key in the registry's layout) on {@code lease}, signed
   * by {@code key} for that key and lease with sequence {@code seq} and expiry {@code notAfter}
   * ({@link RecordSignature}; with {@code alsoV1}, Muster 0.1's signature too): readers that do not verify decode it
   * like {@link #encode}'s.
   *
   * @throws InvalidInputException (field {@code value}) if the signed value exceeds {@value #MAX_VALUE_BYTES}
   *     bytes
   */
  public static byte[] encodeSigned(Instance instance, String etcdKey, long lease, long seq, Instant notAfter,
      SigningKey key, boolean alsoV1) {
    return requireFits(instance, RecordSignature.sign(key, etcdKey, lease, seq, notAfter, encodeUnchecked(instance),
        alsoV1));
  }

  private static byte[] encodeUnchecked(Instance instance) {
    ObjectNode json = Json.MAPPER.createObjectNode();
    json.put("schema", SCHEMA);
    json.put("address", instance.address());
    json.put("port", instance.port());
    json.put("state", instance.state().name());
    json.put("weight", instance.weight());
    if (instance.zone() != null) {
      json.put("zone", instance.zone());
    }
    if (instance.region() != null) {
      json.put("region", instance.region());
    }
    ArrayNode tags = json.putArray("tags");
    instance.tags().forEach(tags::add);
    ObjectNode metadata = json.putObject("metadata");
    instance.metadata().forEach(metadata::put);
    if (instance.registeredAt() != null) {
      json.put("registeredAt", instance.registeredAt().toString());
    }
    try {
      return Json.MAPPER.writeValueAsBytes(json);
    } catch (JsonProcessingException e) {
      throw new MusterException(ErrorCode.INTERNAL, "cannot write the value of " + instance.key().path(), e);
    }
  }

  private static byte[] requireFits(Instance instance, byte[] bytes) {
    if (bytes.length > MAX_VALUE_BYTES) {
      throw InvalidInputException.withMessage("value", bytes.length, "instance " + instance.key().path()
          + " encodes to " + bytes.length + " bytes, over the " + MAX_VALUE_BYTES
          + "-byte limit of a registry value: shrink its metadata or tags");
    }
    return bytes;
  }

  /**
   * The instance stored under {@code key} with {@code value}: identity from the key, the rest from the value.
   *
   * @throws MalformedValueException naming {@code key.path()} and the problem, for every reason listed above
   */
  public static Instance decode(InstanceKey key, byte[] value) {
    return decode(key, value, null);
  }

  /**
   * As {@link #decode(InstanceKey, byte[])}, for an update: the decoded instance shares with {@code previous} (the
   * instance the key held before; null when none) every string, list, map and time that is equal in both, instead
   * of holding copies of its own. They are immutable, so the result is equal to what the other form returns; a
   * cache that applies many updates allocates less per update.
   *
   * @throws MalformedValueException as {@link #decode(InstanceKey, byte[])}
   */
  public static Instance decode(InstanceKey key, byte[] value, Instance previous) {
    return new ValueDecoder(Objects.requireNonNull(key, "key")).decode(value, previous);
  }
}
