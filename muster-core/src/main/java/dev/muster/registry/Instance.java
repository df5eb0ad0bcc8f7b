package dev.muster.registry;

import dev.muster.InvalidInputException;
import java.time.Clock;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.RandomAccess;
import java.util.Set;
import java.util.TreeMap;

/**
 * One registered provider endpoint: the identity from the etcd key ({@code namespace/service/version/id}) plus the
 * JSON value (SPEC §2). An immutable value, validated on construction; every {@code InvalidInputException} names
 * the field and the bad value.
 *
 * <p>Start from {@link #of(String, String, int)} and adjust with the "withers", each of which returns a new,
 * validated instance: {@code Instance.of("orders", "10.0.0.7", 8080).zone("a").weight(50)}.
 *
 * @param id instance id, a valid {@linkplain Names name}
 * @param namespace a valid name; {@value #DEFAULT_NAMESPACE} by default
 * @param service a valid name
 * @param version a valid name; {@value #DEFAULT_VERSION} by default
 * @param address host name or IPv4/IPv6 literal, without scheme, port, brackets or spaces
 * @param port 1-65535
 * @param state {@code UP}, {@code STARTING} (registered, not ready) or {@code DRAINING}; not null
 * @param weight 0-{@value #MAX_WEIGHT}; {@value #DEFAULT_WEIGHT} by default
 * @param zone null or a valid name
 * @param region null or a valid name
 * @param tags distinct, non-blank, at most 63 characters each, in the given order; null means none
 * @param metadata keys non-blank and at most 63 characters, values not null; kept sorted by key so that equal
 *     instances encode to equal bytes; null means none
 * @param registeredAt when the provider registered; null when a stored value does not say
 */
public record Instance(
    String id,
    String namespace,
    String service,
    String version,
    String address,
    int port,
    InstanceState state,
    int weight,
    String zone,
    String region,
    List<String> tags,
    Map<String, String> metadata,
    Instant registeredAt) {

  public static final String DEFAULT_NAMESPACE = "default";
  public static final String DEFAULT_VERSION = "v1";
  public static final int DEFAULT_WEIGHT = 100;
  public static final int MAX_WEIGHT = 10_000;
  static final int MAX_TAG_OR_KEY_LENGTH = 63;
  private static final int FEW_TAGS = 8;
  /** The JDK's immutable one-entry map, {@code Map.of(k, v)}: nothing can change one once made. */
  private static final Class<?> ONE_ENTRY_MAP = Map.of("k", "v").getClass();

  public Instance {
    Names.requireValid("instance id", id);
    Names.requireValid("namespace", namespace);
    Names.requireValid("service", service);
    Names.requireValid("version", version);
    Addresses.requireValid(address);
    if (port < 1 || port > 65_535) {
      throw new InvalidInputException("port", port, "use 1-65535");
    }
    if (state == null) {
      throw new InvalidInputException("state", null, "use UP, STARTING or DRAINING");
    }
    if (weight < 0 || weight > MAX_WEIGHT) {
      throw new InvalidInputException("weight", weight, "use 0-" + MAX_WEIGHT);
    }
    if (zone != null) {
      Names.requireValid("zone", zone);
    }
    if (region != null) {
      Names.requireValid("region", region);
    }
    tags = copyTags(tags);
    metadata = copyMetadata(metadata);
  }

  /**
   * An {@code UP} instance of {@code service} in namespace {@value #DEFAULT_NAMESPACE}, version
   * {@value #DEFAULT_VERSION}, weight {@value #DEFAULT_WEIGHT}, with a generated id
   * ({@link InstanceIdGenerator#system()}) and {@code registeredAt} now.
   */
  public static Instance of(String service, String address, int port) {
    return of(service, address, port, InstanceIdGenerator.system(), Clock.systemUTC());
  }

  /** As {@link #of(String, String, int)}, with the id generator and clock given (for tests and the lab). */
  public static Instance of(String service, String address, int port, InstanceIdGenerator ids, Clock clock) {
    return new Instance(ids.next(port), DEFAULT_NAMESPACE, service, DEFAULT_VERSION, address, port,
        InstanceState.UP, DEFAULT_WEIGHT, null, null, List.of(), Map.of(), clock.instant());
  }

  /** The identity part, as in the etcd key. */
  public InstanceKey key() {
    return new InstanceKey(namespace, service, version, id);
  }

  public Instance id(String id) {
    return new Instance(id, namespace, service, version, address, port, state, weight, zone, region, tags,
        metadata, registeredAt);
  }

  public Instance namespace(String namespace) {
    return new Instance(id, namespace, service, version, address, port, state, weight, zone, region, tags,
        metadata, registeredAt);
  }

  public Instance version(String version) {
    return new Instance(id, namespace, service, version, address, port, state, weight, zone, region, tags,
        metadata, registeredAt);
  }

  public Instance address(String address) {
    return new Instance(id, namespace, service, version, address, port, state, weight, zone, region, tags,
        metadata, registeredAt);
  }

  public Instance port(int port) {
    return new Instance(id, namespace, service, version, address, port, state, weight, zone, region, tags,
        metadata, registeredAt);
  }

  public Instance state(InstanceState state) {
    return new Instance(id, namespace, service, version, address, port, state, weight, zone, region, tags,
        metadata, registeredAt);
  }

  public Instance weight(int weight) {
    return new Instance(id, namespace, service, version, address, port, state, weight, zone, region, tags,
        metadata, registeredAt);
  }

  /** Sets the zone; null removes it. */
  public Instance zone(String zone) {
    return new Instance(id, namespace, service, version, address, port, state, weight, zone, region, tags,
        metadata, registeredAt);
  }

  /** Sets the region; null removes it. */
  public Instance region(String region) {
    return new Instance(id, namespace, service, version, address, port, state, weight, zone, region, tags,
        metadata, registeredAt);
  }

  /** Replaces the tags. */
  public Instance tags(List<String> tags) {
    return new Instance(id, namespace, service, version, address, port, state, weight, zone, region, tags,
        metadata, registeredAt);
  }

  /** Adds one tag at the end. */
  public Instance tag(String tag) {
    List<String> more = new ArrayList<>(tags);
    more.add(tag);
    return tags(more);
  }

  /** Replaces the metadata. */
  public Instance metadata(Map<String, String> metadata) {
    return new Instance(id, namespace, service, version, address, port, state, weight, zone, region, tags,
        metadata, registeredAt);
  }

  /** Adds or replaces one metadata entry. */
  public Instance meta(String key, String value) {
    if (key == null) {
      throw new InvalidInputException("metadata key", null, "use 1-63 characters, not only spaces");
    }
    Map<String, String> more = new TreeMap<>(metadata);
    more.put(key, value);
    return metadata(more);
  }

  public Instance registeredAt(Instant registeredAt) {
    return new Instance(id, namespace, service, version, address, port, state, weight, zone, region, tags,
        metadata, registeredAt);
  }

  private static List<String> copyTags(List<String> tags) {
    if (tags == null) {
      return List.of();
    }
    if (tags.size() <= FEW_TAGS && tags instanceof RandomAccess) {
      // Most instances have a tag or two: comparing each with the earlier ones spares a hash set per instance
      // decoded, and finds the same first repeat the set would.
      for (int i = 0; i < tags.size(); i++) {
        String tag = requireValidTag(tags.get(i));
        for (int j = 0; j < i; j++) {
          if (tags.get(j).equals(tag)) {
            throw new InvalidInputException("tag", tag, "each tag may appear only once");
          }
        }
      }
      return List.copyOf(tags);
    }
    Set<String> seen = new HashSet<>();
    for (String tag : tags) {
      if (!seen.add(requireValidTag(tag))) {
        throw new InvalidInputException("tag", tag, "each tag may appear only once");
      }
    }
    return List.copyOf(tags);
  }

  private static String requireValidTag(String tag) {
    if (tag == null || tag.isBlank() || tag.length() > MAX_TAG_OR_KEY_LENGTH) {
      throw new InvalidInputException("tag", tag, "use 1-63 characters, not only spaces");
    }
    return tag;
  }

  private static Map<String, String> copyMetadata(Map<String, String> metadata) {
    if (metadata == null || metadata.isEmpty()) {
      return Map.of();
    }
    if (metadata.size() == 1) {
      // One entry is sorted already. The JDK's one-entry map is one small object, where a sorted map's wrapper,
      // map and entry hold about 100 B more for every cached instance with one metadata entry. One already (an
      // update's decoder shares the map of the instance it replaces) is immutable and kept, as List.copyOf keeps
      // an immutable list.
      Map.Entry<String, String> entry = metadata.entrySet().iterator().next();
      requireValidKey(entry.getKey());
      requireValue(entry);
      return metadata.getClass() == ONE_ENTRY_MAP ? metadata : Map.of(entry.getKey(), entry.getValue());
    }
    TreeMap<String, String> sorted = new TreeMap<>();
    for (Map.Entry<String, String> entry : metadata.entrySet()) {
      sorted.put(requireValidKey(entry.getKey()), requireValue(entry));
    }
    return Collections.unmodifiableMap(sorted);
  }

  private static String requireValidKey(String key) {
    if (key == null || key.isBlank() || key.length() > MAX_TAG_OR_KEY_LENGTH) {
      throw new InvalidInputException("metadata key", key, "use 1-63 characters, not only spaces");
    }
    return key;
  }

  private static String requireValue(Map.Entry<String, String> entry) {
    if (entry.getValue() == null) {
      throw new InvalidInputException("metadata[" + entry.getKey() + "]", null, "give a value (it may be empty)");
    }
    return entry.getValue();
  }
}
