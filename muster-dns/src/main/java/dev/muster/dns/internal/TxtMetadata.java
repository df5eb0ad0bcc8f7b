package dev.muster.dns.internal;

import java.util.List;
import java.util.Set;

/**
 * Which instance metadata keys the TXT records carry ({@code --txt-metadata}): none by default, since anyone who
 * reaches the gateway's port reads them, whatever etcd's roles keep from that reader; the named keys; or, with
 * {@code *}, all of them (issue 17's behaviour). Immutable.
 */
public final class TxtMetadata {
  public static final TxtMetadata NONE = new TxtMetadata(false, Set.of());
  public static final TxtMetadata ALL = new TxtMetadata(true, Set.of());

  private final boolean all;
  private final Set<String> keys;

  private TxtMetadata(boolean all, Set<String> keys) {
    this.all = all;
    this.keys = keys;
  }

  /** The keys of {@code --txt-metadata}; {@code *} among them means every key. */
  public static TxtMetadata of(List<String> keys) {
    if (keys.contains("*")) {
      return ALL;
    }
    return keys.isEmpty() ? NONE : new TxtMetadata(false, Set.copyOf(keys));
  }

  boolean shows(String key) {
    return all || keys.contains(key);
  }
}
