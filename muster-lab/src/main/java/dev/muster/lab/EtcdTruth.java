package dev.muster.lab;

import dev.muster.etcd.EtcdConfig;
import dev.muster.etcd.EtcdRegistry;
import dev.muster.registry.Instance;
import java.time.Duration;
import java.util.List;

/**
 * What etcd holds now, as the lab reads it to judge a scenario: the sorted instance ids of a service, through a
 * registry of its own. The lab's reads are its yardstick, not the code under test, so they wait up to
 * {@link #READ_TIMEOUT} where a product call gives up after 2 s: a suite run had {@code watch_resume_from_revision}
 * end with "could not list /muster/default/hello/: no answer within the request timeout" while other modules' tests
 * loaded the machine (a new client's first range, on two cores).
 */
public final class EtcdTruth {
  /** How long one of the lab's own reads may take. */
  public static final Duration READ_TIMEOUT = Duration.ofSeconds(15);

  private EtcdTruth() {}

  /** The ids of {@code service}'s instances in the default namespace, sorted. */
  public static List<String> ids(String endpoints, String service) {
    try (EtcdRegistry registry = EtcdRegistry.connect(EtcdConfig.of(endpoints).withRequestTimeout(READ_TIMEOUT))) {
      return registry.list("default", service).instances().stream().map(Instance::id).sorted().toList();
    }
  }
}
