package dev.muster.etcd;

import dev.muster.registry.Instance;
import java.util.List;

/**
 * What the registry held at one revision: the instances that decoded, and the keys whose values did not (with
 * the reason), so a reader can see both.
 */
public record RegistryListing(long revision, List<Instance> instances, List<Problem> problems) {
  /** A key under the prefix whose value could not be read as an instance. */
  public record Problem(String key, String reason) {}

  public RegistryListing {
    instances = List.copyOf(instances);
    problems = List.copyOf(problems);
  }
}
