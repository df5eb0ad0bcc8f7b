package dev.muster.cache;

import dev.muster.registry.Instance;
import dev.muster.registry.InstanceKey;
import java.util.Comparator;

/**
 * Orders instance keys exactly as their {@link InstanceKey#path() path} strings compare
 * ({@code namespace/service/version/id}, {@link String#compareTo}), without building those strings. Stateless.
 *
 * <p>The static overloads order instances by the same path, from their own fields: the endpoint set's tree
 * ({@link InstanceTree}) holds instances and no keys.
 *
 * <p>Why not {@code Comparator.comparing(InstanceKey::path)}: the endpoint set's tree calls the comparator about
 * log2(n) times per lookup, and {@code path()} concatenates a new string on every call — two strings per
 * comparison, dozens per changed key at 10,000 instances, which would bring back much of the allocation the
 * persistent set removes. Why not
 * compare the four fields one after another: that is a different order. Names may contain {@code '-'}, which
 * sorts before the {@code '/'} separator, so the path order puts version {@code v1-rc/...} before {@code v1/...}
 * while a field-by-field comparison puts {@code v1} first. {@link EndpointSet#instances()} has always been sorted
 * by path, so this walks the four fields as if they were one string joined by {@code '/'}.
 *
 * <p>It is consistent with {@code equals}: no valid {@linkplain dev.muster.registry.Names name} contains
 * {@code '/'}, so two keys with the same path are the same key. Keys must not be null.
 */
final class KeyPathOrder implements Comparator<InstanceKey> {
  static final KeyPathOrder INSTANCE = new KeyPathOrder();

  private static final char SEPARATOR = '/';

  private KeyPathOrder() {}

  @Override
  public int compare(InstanceKey a, InstanceKey b) {
    if (a == b) {
      return 0;
    }
    return compare(a.namespace(), a.service(), a.version(), a.id(), b.namespace(), b.service(), b.version(),
        b.id());
  }

  /** Orders two instances by their keys' paths, as {@link #compare(InstanceKey, InstanceKey)} orders the keys. */
  static int compare(Instance a, Instance b) {
    if (a == b) {
      return 0;
    }
    return compare(a.namespace(), a.service(), a.version(), a.id(), b.namespace(), b.service(), b.version(),
        b.id());
  }

  /** Orders a key against an instance's key, without building the instance's key. */
  static int compare(InstanceKey a, Instance b) {
    return compare(a.namespace(), a.service(), a.version(), a.id(), b.namespace(), b.service(), b.version(),
        b.id());
  }

  private static int compare(String namespaceA, String serviceA, String versionA, String idA,
      String namespaceB, String serviceB, String versionB, String idB) {
    int c = compareSegment(namespaceA, namespaceB, false);
    if (c == 0) {
      c = compareSegment(serviceA, serviceB, false);
    }
    if (c == 0) {
      c = compareSegment(versionA, versionB, false);
    }
    if (c == 0) {
      c = compareSegment(idA, idB, true);
    }
    return c;
  }

  /**
   * Compares one segment as part of the joined path. When the segments are equal the paths continue alike. When
   * one is a proper prefix of the other, the shorter path continues with the separator (or ends, after the last
   * segment) where the longer one continues with a name character, and that decides.
   */
  private static int compareSegment(String a, String b, boolean last) {
    int common = Math.min(a.length(), b.length());
    for (int i = 0; i < common; i++) {
      char x = a.charAt(i);
      char y = b.charAt(i);
      if (x != y) {
        return x - y;
      }
    }
    if (a.length() == b.length()) {
      return 0;
    }
    if (last) {
      return a.length() - b.length();
    }
    char x = a.length() > common ? a.charAt(common) : SEPARATOR;
    char y = b.length() > common ? b.charAt(common) : SEPARATOR;
    return x - y;
  }
}
