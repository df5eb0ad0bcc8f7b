package dev.muster.etcd.internal;

import io.etcd.jetcd.ByteSequence;
import io.etcd.jetcd.Client;
import io.etcd.jetcd.KeyValue;
import io.etcd.jetcd.kv.GetResponse;
import io.etcd.jetcd.kv.TxnResponse;
import io.etcd.jetcd.op.Cmp;
import io.etcd.jetcd.op.CmpTarget;
import io.etcd.jetcd.op.Op;
import io.etcd.jetcd.options.GetOption;
import io.etcd.jetcd.options.LeaseOption;
import io.etcd.jetcd.options.PutOption;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

/**
 * The handful of etcd calls the registrar makes, each blocking the calling thread (always a Muster loop thread,
 * never an application thread after {@code register()}) for at most the request timeout.
 *
 * <p>Stateless; every method throws {@link EtcdCallException} with the call named, and the cause to classify with
 * {@link EtcdErrors}.
 */
final class EtcdOps {
  private EtcdOps() {}

  /** The outcome of a put-if-absent: either our revision, or the key's current holder. */
  record PutIfAbsent(boolean created, long revision, long holderLease) {}

  static ByteSequence bytes(String s) {
    return ByteSequence.from(s, StandardCharsets.UTF_8);
  }

  static long grant(Client c, Duration ttl, Duration timeout) {
    return await("grant a lease", c.getLeaseClient().grant(ttl.toSeconds()), timeout).getID();
  }

  /** {@code if create_revision(key) == 0 then put(key, value, lease) else get(key)}, atomically. */
  static PutIfAbsent putIfAbsent(Client c, String key, byte[] value, long lease, Duration timeout) {
    ByteSequence k = bytes(key);
    TxnResponse r = await("register " + key, c.getKVClient().txn()
        .If(new Cmp(k, Cmp.Op.EQUAL, CmpTarget.createRevision(0)))
        .Then(Op.put(k, ByteSequence.from(value), PutOption.builder().withLeaseId(lease).build()))
        .Else(Op.get(k, GetOption.DEFAULT))
        .commit(), timeout);
    if (r.isSucceeded()) {
      return new PutIfAbsent(true, r.getHeader().getRevision(), lease);
    }
    long holder = r.getGetResponses().stream().flatMap(g -> g.getKvs().stream()).mapToLong(KeyValue::getLease)
        .findFirst().orElse(0);
    return new PutIfAbsent(false, r.getHeader().getRevision(), holder);
  }

  /** Puts on the lease; fails with NOT_FOUND when the lease is gone. Returns the revision. */
  static long put(Client c, String key, byte[] value, long lease, Duration timeout) {
    return await("update " + key, c.getKVClient().put(bytes(key), ByteSequence.from(value),
        PutOption.builder().withLeaseId(lease).build()), timeout).getHeader().getRevision();
  }

  /** Deletes {@code key} if its mod revision is {@code modRevision}; returns the revision after. */
  static long deleteIf(Client c, String key, long modRevision, Duration timeout) {
    ByteSequence k = bytes(key);
    return await("delete " + key, c.getKVClient().txn()
        .If(new Cmp(k, Cmp.Op.EQUAL, CmpTarget.modRevision(modRevision)))
        .Then(Op.delete(k, io.etcd.jetcd.options.DeleteOption.DEFAULT))
        .commit(), timeout).getHeader().getRevision();
  }

  /** The mod revision of {@code key}, empty when it does not exist. */
  static java.util.OptionalLong modRevision(Client c, String key, Duration timeout) {
    return await("read " + key, c.getKVClient().get(bytes(key), GetOption.builder().withKeysOnly(true).build()),
        timeout).getKvs().stream().mapToLong(KeyValue::getModRevision).findFirst();
  }

  /** Revokes the lease (its keys are deleted at once); returns the revision of the deletion. */
  static long revoke(Client c, long lease, Duration timeout) {
    return await("revoke lease " + Long.toHexString(lease), c.getLeaseClient().revoke(lease), timeout)
        .getHeader().getRevision();
  }

  /** Remaining TTL of a lease, or empty when it no longer exists. */
  static Optional<Duration> remaining(Client c, long lease, Duration timeout) {
    long ttl = await("read lease " + Long.toHexString(lease), c.getLeaseClient().timeToLive(lease,
        LeaseOption.DEFAULT), timeout).getTTL();
    return ttl < 0 ? Optional.empty() : Optional.of(Duration.ofSeconds(ttl));
  }

  static GetResponse getPrefix(Client c, String prefix, Duration timeout) {
    return await("list " + prefix, c.getKVClient().get(bytes(prefix),
        GetOption.builder().isPrefix(true).build()), timeout);
  }

  /** The keys under {@code prefix}, without their values (one range, at one revision). */
  static GetResponse getPrefixKeys(Client c, String prefix, Duration timeout) {
    return await("list the keys of " + prefix, c.getKVClient().get(bytes(prefix),
        GetOption.builder().isPrefix(true).withKeysOnly(true).build()), timeout);
  }

  static <T> T await(String what, CompletableFuture<T> future, Duration timeout) {
    try {
      return future.get(timeout.toNanos(), TimeUnit.NANOSECONDS);
    } catch (TimeoutException e) {
      future.cancel(true);
      throw new EtcdCallException(what, e);
    } catch (ExecutionException e) {
      throw new EtcdCallException(what, e.getCause());
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      future.cancel(true);
      throw new EtcdCallException(what, e);
    }
  }

  /** An etcd call failed; {@link #kind()} says whether retrying makes sense. */
  static final class EtcdCallException extends RuntimeException {
    private static final long serialVersionUID = 1L;
    private final transient EtcdErrors.Kind kind;

    EtcdCallException(String what, Throwable cause) {
      super("could not " + what + ": " + EtcdErrors.describe(cause), cause);
      this.kind = cause instanceof InterruptedException ? EtcdErrors.Kind.OTHER : EtcdErrors.classify(cause);
    }

    EtcdErrors.Kind kind() {
      return kind;
    }
  }
}
