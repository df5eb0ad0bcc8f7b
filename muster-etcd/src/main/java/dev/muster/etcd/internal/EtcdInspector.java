package dev.muster.etcd.internal;

import dev.muster.InvalidInputException;
import dev.muster.MusterException;
import dev.muster.RegistryUnavailableException;
import dev.muster.etcd.EtcdConfig;
import dev.muster.etcd.EtcdMaintenance.Alarm;
import dev.muster.etcd.EtcdMaintenance.Keys;
import dev.muster.etcd.EtcdMaintenance.LeaseTtl;
import dev.muster.etcd.EtcdMaintenance.Member;
import dev.muster.etcd.EtcdMaintenance.MemberStatus;
import dev.muster.etcd.EtcdMaintenance.StoredKey;
import dev.muster.registry.Instance;
import dev.muster.registry.InstanceCodec;
import dev.muster.registry.InstanceKey;
import dev.muster.registry.InstanceState;
import dev.muster.sign.RecordSignature;
import io.etcd.jetcd.ByteSequence;
import io.etcd.jetcd.Client;
import io.etcd.jetcd.KeyValue;
import io.etcd.jetcd.kv.GetResponse;
import io.etcd.jetcd.kv.TxnResponse;
import io.etcd.jetcd.maintenance.StatusResponse;
import io.etcd.jetcd.op.Cmp;
import io.etcd.jetcd.op.CmpTarget;
import io.etcd.jetcd.op.Op;
import io.etcd.jetcd.options.LeaseOption;
import io.etcd.jetcd.options.PutOption;
import java.io.OutputStream;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;

/**
 * {@code EtcdMaintenance}'s etcd calls, through one connection opened on first use. Status calls go to one member
 * each (jetcd's {@code statusMember} opens a channel to the member named), all at once, so a frozen member costs
 * its own call's timeout and nothing else.
 *
 * <p>Thread-safe: the shared connection is created under this object's monitor, and no call holds it while
 * waiting for etcd.
 */
public final class EtcdInspector implements AutoCloseable {
  private final EtcdConfig config;
  private EtcdConnection connection; // guarded by this
  private final java.util.concurrent.ConcurrentHashMap<URI, CompletableFuture<StatusResponse>> inFlight =
      new java.util.concurrent.ConcurrentHashMap<>();

  public EtcdInspector(EtcdConfig config) {
    this.config = config;
  }

  public EtcdConfig config() {
    return config;
  }

  private synchronized Client client() {
    if (connection == null) {
      connection = new EtcdConnection(config);
    }
    return connection.client();
  }

  /**
   * Starts every call first, then waits for each until one shared deadline: all members are asked at once (no
   * thread pool in between, whose size on a 2-core machine would make them one at a time).
   */
  public List<MemberStatus> status(List<URI> endpoints, Duration timeout) {
    List<CompletableFuture<StatusResponse>> calls = new ArrayList<>();
    for (URI endpoint : endpoints) {
      CompletableFuture<StatusResponse> call;
      try {
        call = statusCall(endpoint);
      } catch (RuntimeException e) {
        call = CompletableFuture.failedFuture(e);
      }
      calls.add(call);
    }
    long deadline = System.nanoTime() + timeout.toNanos();
    List<MemberStatus> out = new ArrayList<>();
    for (int i = 0; i < endpoints.size(); i++) {
      Duration left = Duration.ofNanos(Math.max(0, deadline - System.nanoTime()));
      out.add(status(config, endpoints.get(i), calls.get(i), left, timeout));
    }
    return out;
  }

  private static MemberStatus status(EtcdConfig config, URI endpoint, CompletableFuture<StatusResponse> call,
      Duration left, Duration timeout) {
    try {
      StatusResponse r = EtcdOps.await("read the status of " + endpoint, call, left);
      return new MemberStatus(endpoint, null, false, hex(r.getHeader().getMemberId()), r.getVersion(), r.getDbSize(),
          r.getDbSizeInUse(), hex(r.getLeader()), r.getRaftTerm(), r.getRaftIndex(), r.getRaftAppliedIndex(),
          r.isLearner(), r.getErrorList());
    } catch (EtcdOps.EtcdCallException e) {
      if (e.kind() == EtcdErrors.Kind.DENIED || e.kind() == EtcdErrors.Kind.UNAUTHENTICATED) {
        return MemberStatus.refused(endpoint, EtcdErrors.refusal(config, e.kind(), "read the status of member "
            + endpoint, "etcd's root role", e.getCause()));
      }
      return MemberStatus.failed(endpoint, e.getCause() instanceof java.util.concurrent.TimeoutException
          ? "no answer within " + timeout.toMillis() + " ms" : EtcdErrors.describe(e.getCause()));
    } catch (RuntimeException e) {
      return MemberStatus.failed(endpoint, EtcdErrors.describe(e));
    }
  }

  /**
   * The status call in flight to {@code endpoint}, or a new one. jetcd opens a channel per call to the member
   * named and shuts it when the call completes, which for a frozen member is when it thaws: a call still pending
   * is waited on again instead of opening one more channel each time someone asks (the console asks every few
   * seconds). The returned future is a copy, so a caller's timeout cancels only its own wait.
   */
  private CompletableFuture<StatusResponse> statusCall(URI endpoint) {
    CompletableFuture<StatusResponse> call = inFlight.compute(endpoint, (e, pending) -> pending != null
        && !pending.isDone() ? pending : client().getMaintenanceClient().statusMember(e.toString()));
    call.whenComplete((r, t) -> inFlight.remove(endpoint, call));
    return call.copy();
  }

  public List<Member> members() {
    return call("list the cluster's members", "etcd's root role", c -> c.getClusterClient().listMember()).getMembers().stream()
        .map(m -> new Member(hex(m.getId()), m.getName(), m.getPeerURIs(), m.getClientURIs(), m.isLearner()))
        .toList();
  }

  public List<Alarm> alarms() {
    return call("list the alarms", "etcd's root role", c -> c.getMaintenanceClient().listAlarms()).getAlarms().stream()
        .map(a -> new Alarm(hex(a.getMemberId()), a.getAlarmType().name())).toList();
  }

  public Keys keys(String prefix) {
    GetResponse r = call("list " + prefix, "read on " + prefix, c -> c.getKVClient().get(EtcdOps.bytes(prefix),
        io.etcd.jetcd.options.GetOption.builder().isPrefix(true).build()));
    List<StoredKey> keys = new ArrayList<>(r.getKvs().size());
    for (KeyValue kv : r.getKvs()) {
      keys.add(new StoredKey(kv.getKey().toString(StandardCharsets.UTF_8), kv.getValue().getBytes(), kv.getLease(),
          kv.getCreateRevision(), kv.getModRevision(), kv.getVersion()));
    }
    return new Keys(r.getHeader().getRevision(), keys);
  }

  public Optional<LeaseTtl> lease(long id) {
    var r = call("read lease " + Long.toHexString(id), "read on the keys of the lease", c -> c.getLeaseClient().timeToLive(id, LeaseOption.DEFAULT));
    return r.getTTL() < 0 ? Optional.empty()
        : Optional.of(new LeaseTtl(id, Duration.ofSeconds(r.getGrantedTTL()), Duration.ofSeconds(r.getTTL())));
  }

  public long snapshot(OutputStream out, Duration timeout) {
    try {
      return EtcdOps.await("take a snapshot", client().getMaintenanceClient().snapshot(out), timeout);
    } catch (EtcdOps.EtcdCallException e) {
      throw failure(e, "take a snapshot", "etcd's root role");
    }
  }

  public Instance drain(InstanceKey key) {
    String etcdKey = config.layout().instanceKey(key);
    GetResponse got = call("read " + etcdKey, "read on " + etcdKey, c -> c.getKVClient().get(EtcdOps.bytes(etcdKey)));
    if (got.getKvs().isEmpty()) {
      throw InvalidInputException.withMessage("instance", key.path(), "there is no instance " + key.path()
          + " (no key " + etcdKey + "): it may have left already");
    }
    KeyValue kv = got.getKvs().get(0);
    byte[] value = kv.getValue().getBytes();
    Instance stored;
    try {
      stored = InstanceCodec.decode(key, value);
    } catch (MusterException e) {
      throw InvalidInputException.withMessage("instance", key.path(), "the value of " + etcdKey
          + " is not an instance (" + e.getMessage() + "): fix or delete the key");
    }
    if (stored.state() == InstanceState.DRAINING) {
      return stored;
    }
    if (RecordSignature.isSigned(value)) {
      throw InvalidInputException.withMessage("instance", key.path(), key.path() + " is a signed record, which only"
          + " its provider's key can change: stop the provider with SIGTERM to drain it");
    }
    Instance draining = stored.state(InstanceState.DRAINING);
    ByteSequence k = EtcdOps.bytes(etcdKey);
    TxnResponse r = call("drain " + etcdKey, "readwrite on " + config.layout().servicePrefix(key.namespace(),
        key.service()), c -> c.getKVClient().txn()
        .If(new Cmp(k, Cmp.Op.EQUAL, CmpTarget.modRevision(kv.getModRevision())))
        .Then(Op.put(k, ByteSequence.from(InstanceCodec.encode(draining)),
            PutOption.builder().withLeaseId(kv.getLease()).build()))
        .commit());
    if (!r.isSucceeded()) {
      throw InvalidInputException.withMessage("instance", key.path(), key.path()
          + " changed while it was being drained (re-registered or updated): look again and retry");
    }
    return draining;
  }

  /** {@code what} is the action in words ("drain KEY"), {@code needed} the permission that allows it. */
  private <T> T call(String what, String needed, java.util.function.Function<Client, CompletableFuture<T>> call) {
    try {
      return EtcdOps.await(what, call.apply(client()), config.requestTimeout());
    } catch (EtcdOps.EtcdCallException e) {
      throw failure(e, what, needed);
    }
  }

  private RuntimeException failure(EtcdOps.EtcdCallException e, String what, String needed) {
    if (e.kind() == EtcdErrors.Kind.DENIED || e.kind() == EtcdErrors.Kind.UNAUTHENTICATED) {
      return EtcdErrors.accessDenied(config, e.kind(), what, needed, e.getCause());
    }
    return new RegistryUnavailableException(e.getMessage() + " (etcd at " + config.endpoints()
        + "): check that etcd runs there", e);
  }

  private static String hex(long id) {
    return Long.toHexString(id);
  }

  @Override
  public synchronized void close() {
    if (connection != null) {
      connection.close();
    }
  }
}
