package dev.muster.cli;

import dev.muster.etcd.EtcdRegistry;
import dev.muster.etcd.RegistryListing;
import dev.muster.registry.Instance;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.SortedMap;
import java.util.TreeMap;

/**
 * How many instances each {@code namespace/service} has in one registry, as Muster's own listing reads them, and the
 * keys under Muster's root whose values did not decode (they count for no service). What {@code muster snapshot
 * verify} compares between a snapshot and the live cluster. Immutable.
 *
 * @param revision the highest revision the namespaces were listed at (each namespace is one read); 0 when there is
 *     no namespace
 */
record ServiceCounts(long revision, SortedMap<String, Integer> instances, List<String> undecodable) {
  ServiceCounts {
    instances = Collections.unmodifiableSortedMap(new TreeMap<>(instances));
    undecodable = List.copyOf(undecodable);
  }

  /** Reads every namespace of {@code registry}, one listing each. */
  static ServiceCounts read(EtcdRegistry registry) {
    SortedMap<String, Integer> counts = new TreeMap<>();
    List<String> undecodable = new ArrayList<>();
    long revision = 0;
    for (String namespace : registry.namespaces()) {
      RegistryListing listing = registry.list(namespace, null);
      revision = Math.max(revision, listing.revision());
      for (Instance i : listing.instances()) {
        counts.merge(namespace + "/" + i.service(), 1, Integer::sum);
      }
      listing.problems().forEach(p -> undecodable.add(p.key() + ": " + p.reason()));
    }
    return new ServiceCounts(revision, counts, undecodable);
  }

  int total() {
    return instances.values().stream().mapToInt(Integer::intValue).sum();
  }

  /** {@code 3 services, 7 instances, 0 undecodable keys}. */
  String summary() {
    return instances.size() + " services, " + total() + " instances, " + undecodable.size() + " undecodable keys";
  }
}
