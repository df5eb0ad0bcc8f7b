package dev.muster.conformance;

import java.nio.file.Path;
import java.time.Duration;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;

/**
 * One consumer adapter as the suite faces it: what a new call can reach through it now. Each adapter observes the
 * way its users see it: MusterClient and the gRPC channel by making calls (the ids that answered), Spring's
 * LoadBalancer by choosing, its DiscoveryClient by listing, {@code muster dns} by a real {@code dig}, the console
 * by its event stream.
 */
interface Adapter extends AutoCloseable {
  /** The column name in the conformance table (docs/adapters/README.md). */
  String column();

  /** What a new call can reach now (see the class comment). Never throws for a refusal: it is observed. */
  Observation observe();

  @Override
  void close();

  /**
   * What one observation saw: the instance ids reached (or listed, answered, shown UP), how many calls or picks
   * were refused because the registry was stale past maxStale (FAIL_CLOSED; for a list or DNS: the empty list,
   * SERVFAIL), and how many failed otherwise.
   */
  record Observation(Map<String, Integer> counts, int refused, int failed, String detail) {
    public Observation {
      counts = Map.copyOf(counts);
    }

    /** A list's observation: each id once. */
    static Observation listing(Set<String> ids, int refused, int failed, String detail) {
      Map<String, Integer> counts = new TreeMap<>();
      ids.forEach(id -> counts.put(id, 1));
      return new Observation(counts, refused, failed, detail);
    }

    Set<String> ids() {
      return new TreeSet<>(counts.keySet());
    }

    boolean refusedAll() {
      return counts.isEmpty() && refused > 0 && failed == 0;
    }

    @Override
    public String toString() {
      return "Observation[" + new TreeMap<>(counts) + ", refused " + refused + ", failed " + failed
          + (detail.isEmpty() ? "" : ", " + detail) + "]";
    }
  }

  /**
   * What every adapter of one test is configured with: {@code trustKey} null trusts nothing (records are not
   * checked), {@code maxStale} null never refuses, {@code slowStart} zero does not ramp: the negative controls.
   */
  record Setup(String endpoints, String namespace, Path trustKey, Duration maxStale, Duration slowStart) {}
}
