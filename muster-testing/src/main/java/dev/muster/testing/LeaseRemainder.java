package dev.muster.testing;

import com.fasterxml.jackson.databind.JsonNode;
import java.time.Duration;
import java.time.Instant;
import java.util.Optional;
import java.util.Set;

/**
 * The one rule that splits a stale window (a provider stops renewing at the fault; consumers drop it later) into
 * the part etcd had to wait by contract and the rest:
 *
 * <pre>
 *   lease remainder      = last renewal at or before the fault + the TTL granted at it − the fault
 *   detection + delivery = window − lease remainder   (etcd's expiry loop, the delete, the watch, the cache)
 * </pre>
 *
 * <p>A renewal is a {@code registered}, {@code reregistered} or {@code keepalive} entry in the provider's own
 * JSON-lines log ({@link JsonLog}). The TTL granted is the entry's {@code ttl_s} (a keepalive's is what etcd
 * reported: it may grant more than was asked, e.g. after a restart), else the configured TTL. With no renewal logged before the fault there is no split.
 *
 * <p>The lab's stale-window scenarios and the bench's kill -9 row both use it. Stateless.
 */
public final class LeaseRemainder {
  private static final Set<String> RENEWALS = Set.of("registered", "reregistered", "keepalive");

  private LeaseRemainder() {}

  /** When the provider's lease ran out if nothing renewed it after {@code fault}; empty with no renewal logged. */
  public static Optional<Instant> expiry(JsonLog providerLog, Instant fault, Duration configuredTtl) {
    Instant last = null;
    Duration granted = configuredTtl;
    for (JsonNode n : providerLog.lines()) {
      if (!RENEWALS.contains(n.path("event").asText())) {
        continue;
      }
      Instant at = JsonLog.ts(n);
      if (!at.isAfter(fault) && (last == null || !at.isBefore(last))) {
        last = at;
        granted = grantedTtl(n).orElse(configuredTtl);
      }
    }
    return last == null ? Optional.empty() : Optional.of(last.plus(granted));
  }

  /** Last renewal at or before {@code fault} + the TTL granted − {@code fault}; empty with no renewal logged. */
  public static Optional<Duration> at(JsonLog providerLog, Instant fault, Duration configuredTtl) {
    return expiry(providerLog, fault, configuredTtl).map(expiry -> Duration.between(fault, expiry));
  }

  /** The TTL a renewal entry reports in its {@code ttl_s} field; empty when it has none. */
  static Optional<Duration> grantedTtl(JsonNode renewal) {
    JsonNode ttl = renewal.path("ttl_s");
    return ttl.canConvertToLong() && ttl.asLong() > 0 ? Optional.of(Duration.ofSeconds(ttl.asLong()))
        : Optional.empty();
  }
}
