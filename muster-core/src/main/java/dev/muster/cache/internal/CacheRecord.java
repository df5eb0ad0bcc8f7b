package dev.muster.cache.internal;

import java.util.Objects;

/**
 * One key-value change as the registry reported it, before decoding: a PUT (also every key of a snapshot) or a
 * DELETE, with the revision that made it and, for a PUT, the lease the value is attached to (0: none), which a
 * signature covers. Values are not copied; callers hand over ownership.
 */
public record CacheRecord(Kind kind, String key, byte[] value, long modRevision, long lease) {
  /** What happened to the key. */
  public enum Kind { PUT, DELETE }

  public CacheRecord {
    Objects.requireNonNull(kind, "kind");
    Objects.requireNonNull(key, "key");
    value = value == null ? new byte[0] : value;
  }

  /** A PUT of a value on no lease. */
  public static CacheRecord put(String key, byte[] value, long modRevision) {
    return put(key, value, modRevision, 0);
  }

  public static CacheRecord put(String key, byte[] value, long modRevision, long lease) {
    return new CacheRecord(Kind.PUT, key, value, modRevision, lease);
  }

  public static CacheRecord delete(String key, long modRevision) {
    return new CacheRecord(Kind.DELETE, key, null, modRevision, 0);
  }
}
