package dev.muster.etcd.internal;

import dev.muster.MusterException;
import dev.muster.RegistryUnavailableException;
import dev.muster.etcd.RegistryListing;
import dev.muster.registry.Instance;
import dev.muster.registry.InstanceCodec;
import dev.muster.registry.InstanceKey;
import dev.muster.registry.Names;
import dev.muster.registry.RegistryLayout;
import io.etcd.jetcd.KeyValue;
import io.etcd.jetcd.kv.GetResponse;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;

/** Reads a registry prefix once, at one revision, for {@code muster ls}. Stateless. */
public final class EtcdListings {
  private EtcdListings() {}

  public static RegistryListing list(EtcdConnection connection, String namespace, String service) {
    RegistryLayout layout = connection.config().layout();
    Names.requireValid("namespace", namespace);
    String prefix = service == null ? layout.namespacePrefix(namespace)
        : layout.servicePrefix(namespace, Names.requireValid("service", service));
    GetResponse response;
    try {
      response = EtcdOps.getPrefix(connection.client(), prefix, connection.config().requestTimeout());
    } catch (EtcdOps.EtcdCallException e) {
      if (e.kind() == EtcdErrors.Kind.DENIED || e.kind() == EtcdErrors.Kind.UNAUTHENTICATED) {
        throw EtcdErrors.accessDenied(connection.config(), e.kind(), "read " + prefix, "read on " + prefix,
            e.getCause());
      }
      throw new RegistryUnavailableException("etcd at " + connection.config().endpoints() + " did not answer ("
          + e.getMessage() + "): check that etcd runs there and that EtcdConfig's endpoints name it", e);
    }
    List<Instance> instances = new ArrayList<>();
    List<RegistryListing.Problem> problems = new ArrayList<>();
    for (KeyValue kv : response.getKvs()) {
      String key = kv.getKey().toString(StandardCharsets.UTF_8);
      try {
        InstanceKey k = layout.parseKey(key);
        instances.add(InstanceCodec.decode(k, kv.getValue().getBytes()));
      } catch (MusterException e) {
        problems.add(new RegistryListing.Problem(key, e.getMessage()));
      }
    }
    return new RegistryListing(response.getHeader().getRevision(), instances, problems);
  }
}
