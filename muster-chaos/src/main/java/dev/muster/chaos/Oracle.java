package dev.muster.chaos;

import dev.muster.MusterException;
import dev.muster.registry.Instance;
import dev.muster.registry.InstanceCodec;
import dev.muster.registry.InstanceKey;
import dev.muster.registry.RegistryLayout;
import io.etcd.jetcd.ByteSequence;
import io.etcd.jetcd.Client;
import io.etcd.jetcd.KeyValue;
import io.etcd.jetcd.op.Op;
import io.etcd.jetcd.options.CompactOption;
import io.etcd.jetcd.options.DeleteOption;
import io.etcd.jetcd.options.GetOption;
import io.etcd.jetcd.options.PutOption;
import io.grpc.Status;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.function.Supplier;

/**
 * The checker's own view of etcd: a plain jetcd client straight to the members (no proxy, no Muster code), for the
 * schedules' writes and for the truth the caches are compared with.
 *
 * <p>Every call retries until {@code patience} has passed, because another schedule may be restarting etcd right
 * now: a write retried after a lost answer may apply twice, which the schedules' writes tolerate (a put of the same
 * value, a delete of a deleted key). Thread-safe; shared by every schedule of a run.
 */
final class Oracle implements AutoCloseable {
  private static final Duration CALL = Duration.ofSeconds(3);
  private static final CompactOption PHYSICAL = CompactOption.builder().withCompactPhysical(true).build();

  private final Client client;
  private final RegistryLayout layout = RegistryLayout.defaults();
  private final Duration patience;

  /** What etcd holds under a prefix at one revision, decoded, and every key's id (to find ids held twice). */
  record Snapshot(long revision, Map<InstanceKey, Instance> instances, Map<String, Long> leases) {}

  Oracle(List<URI> endpoints, Duration patience) {
    this.client = Client.builder().endpoints(endpoints.toArray(URI[]::new)).waitForReady(false)
        .connectTimeout(CALL).build();
    this.patience = patience;
  }

  RegistryLayout layout() {
    return layout;
  }

  long put(String key, byte[] value) {
    return retry("put " + key, () -> client.getKVClient().put(bytes(key), ByteSequence.from(value)))
        .getHeader().getRevision();
  }

  long put(String key, byte[] value, long lease) {
    return retry("put " + key, () -> client.getKVClient().put(bytes(key), ByteSequence.from(value),
        PutOption.builder().withLeaseId(lease).build())).getHeader().getRevision();
  }

  long delete(String key) {
    return retry("delete " + key, () -> client.getKVClient().delete(bytes(key))).getHeader().getRevision();
  }

  /** One transaction of puts ({@code value} non-null) and deletes; returns its revision. */
  long txn(Map<String, byte[]> changes) {
    Op[] ops = changes.entrySet().stream().map(e -> e.getValue() == null
        ? Op.delete(bytes(e.getKey()), DeleteOption.DEFAULT)
        : Op.put(bytes(e.getKey()), ByteSequence.from(e.getValue()), PutOption.DEFAULT)).toArray(Op[]::new);
    return retry("txn " + changes.keySet(), () -> client.getKVClient().txn().Then(ops).commit()).getHeader()
        .getRevision();
  }

  long grant(Duration ttl) {
    return retry("grant a lease", () -> client.getLeaseClient().grant(ttl.toSeconds())).getID();
  }

  /**
   * Compacts at {@code revision}, physically: returns once etcd dropped the revisions from its backend, so the
   * watches resumed after it meet the compacted store (etcd 18089 on 3.4.23 bites only then; without it a resume
   * races the background compaction). A revision already compacted is fine. Returns whether this call compacted.
   */
  boolean compact(long revision) {
    try {
      retry("compact at " + revision, () -> client.getKVClient().compact(revision, PHYSICAL));
      return true;
    } catch (OracleException e) {
      if (code(e.getCause()) == Status.Code.OUT_OF_RANGE) {
        return false;
      }
      throw e;
    }
  }

  long revision() {
    return retry("read the revision", () -> client.getKVClient().get(bytes("/"))).getHeader().getRevision();
  }

  Optional<KeyValue> get(String key) {
    return retry("get " + key, () -> client.getKVClient().get(bytes(key))).getKvs().stream().findFirst();
  }

  /** The prefix now (a linearizable read). */
  Snapshot range(String prefix) {
    return rangeAt(prefix, 0).orElseThrow();
  }

  /** The prefix at {@code revision} (0: now), or empty when that revision is compacted. */
  Optional<Snapshot> rangeAt(String prefix, long revision) {
    GetOption.Builder option = GetOption.builder().isPrefix(true);
    if (revision > 0) {
      option.withRevision(revision);
    }
    io.etcd.jetcd.kv.GetResponse r;
    try {
      r = retry("range " + prefix + (revision > 0 ? " at " + revision : ""),
          () -> client.getKVClient().get(bytes(prefix), option.build()));
    } catch (OracleException e) {
      if (code(e.getCause()) == Status.Code.OUT_OF_RANGE) {
        return Optional.empty();
      }
      throw e;
    }
    Map<InstanceKey, Instance> instances = new HashMap<>();
    Map<String, Long> leases = new HashMap<>();
    for (KeyValue kv : r.getKvs()) {
      String key = kv.getKey().toString(StandardCharsets.UTF_8);
      leases.put(key, kv.getLease());
      try {
        InstanceKey k = layout.parseKey(key);
        instances.put(k, InstanceCodec.decode(k, kv.getValue().getBytes()));
      } catch (MusterException e) {
        // excluded, as the cache excludes it
      }
    }
    return Optional.of(new Snapshot(revision > 0 ? revision : r.getHeader().getRevision(), instances, leases));
  }

  /** Deletes every key under {@code prefix} (a schedule's leftovers). */
  void deletePrefix(String prefix) {
    retry("delete " + prefix, () -> client.getKVClient().delete(bytes(prefix),
        DeleteOption.builder().isPrefix(true).build()));
  }

  @Override
  public void close() {
    client.close();
  }

  private <T> T retry(String what, Supplier<CompletableFuture<T>> call) {
    long deadline = System.nanoTime() + patience.toNanos();
    Throwable last = null;
    while (true) {
      CompletableFuture<T> f = call.get();
      try {
        return f.get(CALL.toMillis(), TimeUnit.MILLISECONDS);
      } catch (TimeoutException e) {
        f.cancel(true);
        last = e;
      } catch (ExecutionException e) {
        last = e.getCause();
        Status.Code code = code(last);
        if (code == Status.Code.OUT_OF_RANGE || code == Status.Code.INVALID_ARGUMENT
            || code == Status.Code.FAILED_PRECONDITION) {
          throw new OracleException(what, last); // etcd's answer, not a passing fault
        }
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        throw new OracleException(what, e);
      }
      if (System.nanoTime() - deadline > 0) {
        throw new OracleException(what + " for " + patience.toSeconds() + " s", last);
      }
      sleep(Duration.ofMillis(100));
    }
  }

  private static Status.Code code(Throwable t) {
    if (t instanceof io.etcd.jetcd.common.exception.EtcdException e) {
      try {
        return Status.Code.valueOf(e.getErrorCode().name());
      } catch (IllegalArgumentException unknown) {
        return Status.Code.UNKNOWN;
      }
    }
    return t == null ? Status.Code.UNKNOWN : Status.fromThrowable(t).getCode();
  }

  static void sleep(Duration d) {
    try {
      Thread.sleep(d.toMillis());
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IllegalStateException("interrupted", e);
    }
  }

  private static ByteSequence bytes(String s) {
    return ByteSequence.from(s, StandardCharsets.UTF_8);
  }

  /** etcd did not answer within the oracle's patience, or refused the call. */
  static final class OracleException extends RuntimeException {
    private static final long serialVersionUID = 1L;

    OracleException(String what, Throwable cause) {
      super("could not " + what + ": " + (cause == null ? "no answer" : cause.toString()), cause);
    }
  }
}
