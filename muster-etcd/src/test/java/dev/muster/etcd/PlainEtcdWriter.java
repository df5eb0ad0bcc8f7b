package dev.muster.etcd;


import dev.muster.cache.EndpointCache;
import dev.muster.registry.Instance;
import dev.muster.registry.InstanceCodec;
import dev.muster.registry.InstanceKey;
import dev.muster.registry.RegistryLayout;
import io.etcd.jetcd.ByteSequence;
import io.etcd.jetcd.Client;
import io.etcd.jetcd.KeyValue;
import io.etcd.jetcd.options.GetOption;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;

/**
 * Writes instances straight into etcd with a plain jetcd client (no Muster code on the write path) and reads the
 * truth back, so cache tests compare Muster's view with etcd's own.
 */
final class PlainEtcdWriter implements AutoCloseable {
  final RegistryLayout layout = RegistryLayout.defaults();
  final String service;
  private final Client client;

  PlainEtcdWriter(List<URI> endpoints, String service) {
    this.service = service;
    this.client = Client.builder().endpoints(endpoints.toArray(URI[]::new)).waitForReady(true).build();
  }

  String prefix() {
    return layout.servicePrefix("default", service);
  }

  Instance instance(int n) {
    return Instance.of(service, "10.0." + (n / 250) + "." + (n % 250 + 1), 8000 + n % 1000).id("i" + n);
  }

  long put(Instance i) {
    return await(client.getKVClient().put(bytes(layout.instanceKey(i)), ByteSequence.from(InstanceCodec.encode(i))))
        .getHeader().getRevision();
  }

  /** Puts many instances in transactions of 100 (etcd's default limit is 128 operations per transaction). */
  long putInBatches(List<Instance> instances) {
    long rev = 0;
    for (int from = 0; from < instances.size(); from += 100) {
      var txn = client.getKVClient().txn();
      var ops = instances.subList(from, Math.min(from + 100, instances.size())).stream()
          .map(i -> io.etcd.jetcd.op.Op.put(bytes(layout.instanceKey(i)), ByteSequence.from(InstanceCodec.encode(i)),
              io.etcd.jetcd.options.PutOption.DEFAULT))
          .toArray(io.etcd.jetcd.op.Op[]::new);
      rev = await(txn.Then(ops).commit()).getHeader().getRevision();
    }
    return rev;
  }

  /** Puts many instances at once, each in its own request, all in flight together; returns the last revision. */
  long putBurst(List<Instance> instances) {
    var futures = instances.stream().map(i -> client.getKVClient().put(bytes(layout.instanceKey(i)),
        ByteSequence.from(InstanceCodec.encode(i)))).toList();
    return futures.stream().mapToLong(f -> await(f).getHeader().getRevision()).max().orElse(0);
  }

  long putRaw(String key, byte[] value) {
    return await(client.getKVClient().put(bytes(key), ByteSequence.from(value))).getHeader().getRevision();
  }

  long delete(Instance i) {
    return await(client.getKVClient().delete(bytes(layout.instanceKey(i)))).getHeader().getRevision();
  }

  /** Compacts to the current revision; already compacted there is fine. */
  long compact() {
    return compact(revision());
  }

  /**
   * Compacts at {@code rev} physically (returns once etcd dropped the revisions from its backend, so a watch opened
   * after it meets the compacted store and never races the background compaction); already compacted there is fine.
   * Returns {@code rev}.
   */
  long compact(long rev) {
    try {
      client.getKVClient().compact(rev, io.etcd.jetcd.options.CompactOption.builder().withCompactPhysical(true).build())
          .get(20, TimeUnit.SECONDS);
    } catch (java.util.concurrent.ExecutionException e) {
      if (io.grpc.Status.fromThrowable(e.getCause()).getCode() != io.grpc.Status.Code.OUT_OF_RANGE) {
        throw new IllegalStateException("compaction failed: " + e, e);
      }
    } catch (Exception e) {
      throw new IllegalStateException("compaction failed: " + e, e);
    }
    return rev;
  }

  /** One transaction that deletes {@code gone} and puts {@code added}: both at the returned revision. */
  long deleteAndPut(Instance gone, Instance added) {
    return await(client.getKVClient().txn().Then(
        io.etcd.jetcd.op.Op.delete(bytes(layout.instanceKey(gone)), io.etcd.jetcd.options.DeleteOption.DEFAULT),
        io.etcd.jetcd.op.Op.put(bytes(layout.instanceKey(added)), ByteSequence.from(InstanceCodec.encode(added)),
            io.etcd.jetcd.options.PutOption.DEFAULT)).commit()).getHeader().getRevision();
  }

  long revision() {
    return await(client.getKVClient().get(bytes("/"))).getHeader().getRevision();
  }

  /** What etcd holds under the prefix at {@code revision}, decoded (values that do not decode are skipped). */
  Map<InstanceKey, Instance> at(long revision) {
    GetOption.Builder option = GetOption.builder().isPrefix(true);
    if (revision > 0) {
      option.withRevision(revision);
    }
    Map<InstanceKey, Instance> out = new HashMap<>();
    for (KeyValue kv : await(client.getKVClient().get(bytes(prefix()), option.build())).getKvs()) {
      try {
        InstanceKey key = layout.parseKey(kv.getKey().toString(StandardCharsets.UTF_8));
        out.put(key, InstanceCodec.decode(key, kv.getValue().getBytes()));
      } catch (RuntimeException e) {
        // malformed: the cache excludes it too
      }
    }
    return out;
  }

  /**
   * Waits until the cache has caught up with {@code revision} (or later) and equals a fresh range of etcd at the
   * cache's own revision.
   */
  void awaitMatches(EndpointCache cache, long revision, Duration within) {
    org.awaitility.Awaitility.await().atMost(within).pollInterval(Duration.ofMillis(50)).until(() ->
        cache.revision() >= revision && cache.current().asMap().equals(at(cache.revision())));
  }

  static ByteSequence bytes(String s) {
    return ByteSequence.from(s, StandardCharsets.UTF_8);
  }

  private static <T> T await(java.util.concurrent.CompletableFuture<T> f) {
    try {
      return f.get(20, TimeUnit.SECONDS);
    } catch (Exception e) {
      throw new IllegalStateException("etcd call failed: " + e, e);
    }
  }

  @Override
  public void close() {
    client.close();
  }
}
