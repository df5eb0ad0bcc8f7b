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

/** Reads a registry prefix once, at one revision, for {@code muster ls} and the service listing. Stateless. */
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
      throw failure(connection, prefix, e);
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

  /**
   * The services with at least one key in {@code namespace}, sorted, from one keys-only range (values are not
   * read, so this costs the keys' bytes only). A key outside the layout is skipped.
   */
  public static java.util.SortedSet<String> services(EtcdConnection connection, String namespace) {
    RegistryLayout layout = connection.config().layout();
    return firstSegments(connection, layout.namespacePrefix(Names.requireValid("namespace", namespace)));
  }

  /** The namespaces with at least one key under the layout's root, sorted: one keys-only range of the root. */
  public static java.util.SortedSet<String> namespaces(EtcdConnection connection) {
    return firstSegments(connection, connection.config().layout().rootPrefix());
  }

  /** The distinct valid names {@code N} of the keys {@code prefix + N + "/..."}, from one keys-only range. */
  private static java.util.SortedSet<String> firstSegments(EtcdConnection connection, String prefix) {
    GetResponse response;
    try {
      response = EtcdOps.getPrefixKeys(connection.client(), prefix, connection.config().requestTimeout());
    } catch (EtcdOps.EtcdCallException e) {
      throw failure(connection, prefix, e);
    }
    java.util.TreeSet<String> names = new java.util.TreeSet<>();
    for (KeyValue kv : response.getKvs()) {
      String key = kv.getKey().toString(StandardCharsets.UTF_8);
      int end = key.indexOf('/', prefix.length());
      if (end > prefix.length()) {
        String name = key.substring(prefix.length(), end);
        if (Names.isValid(name)) {
          names.add(name);
        }
      }
    }
    return java.util.Collections.unmodifiableSortedSet(names);
  }

  /** The keys under a prefix at one revision, without their values. */
  public record KeysAt(long revision, List<String> keys) {
    public KeysAt {
      keys = List.copyOf(keys);
    }
  }

  /** Every key under {@code prefix} (values are not read), and the revision they were read at: one keys-only range. */
  public static KeysAt keys(EtcdConnection connection, String prefix) {
    GetResponse response;
    try {
      response = EtcdOps.getPrefixKeys(connection.client(), prefix, connection.config().requestTimeout());
    } catch (EtcdOps.EtcdCallException e) {
      throw failure(connection, prefix, e);
    }
    List<String> keys = new ArrayList<>(response.getKvs().size());
    for (KeyValue kv : response.getKvs()) {
      keys.add(kv.getKey().toString(StandardCharsets.UTF_8));
    }
    return new KeysAt(response.getHeader().getRevision(), keys);
  }

  private static RuntimeException failure(EtcdConnection connection, String prefix, EtcdOps.EtcdCallException e) {
    if (e.kind() == EtcdErrors.Kind.DENIED || e.kind() == EtcdErrors.Kind.UNAUTHENTICATED) {
      return EtcdErrors.accessDenied(connection.config(), e.kind(), "read " + prefix, "read on " + prefix,
          e.getCause());
    }
    return new RegistryUnavailableException("etcd at " + connection.config().endpoints() + " did not answer ("
        + e.getMessage() + "): check that etcd runs there and that EtcdConfig's endpoints name it", e);
  }
}
