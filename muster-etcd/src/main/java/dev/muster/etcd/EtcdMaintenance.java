package dev.muster.etcd;

import dev.muster.registry.Instance;
import dev.muster.registry.InstanceKey;
import dev.muster.etcd.internal.EtcdInspector;
import java.io.OutputStream;
import java.net.URI;
import java.time.Duration;
import java.util.List;
import java.util.Objects;
import java.util.Optional;

/**
 * What an operator asks of etcd itself, for {@code muster doctor}, {@code muster snapshot} and {@code muster
 * console}: each member's status, the member list, alarms, the raw keys under a prefix with their leases, a lease's
 * TTL, a snapshot, and an operator's drain of one instance. The answers are Muster records; no jetcd type leaks.
 *
 * <pre>{@code
 * try (EtcdMaintenance etcd = EtcdMaintenance.connect(EtcdConfig.builder().endpoints(uris).build())) {
 *   for (EtcdMaintenance.MemberStatus s : etcd.status(Duration.ofSeconds(3))) {
 *     System.out.println(s.endpoint() + (s.answered() ? " leader " + s.leaderId() : " " + s.failure()));
 *   }
 * }
 * }</pre>
 *
 * <p>Thread-safe: every call blocks its caller for at most the timeout it names (or the config's request timeout)
 * and holds no lock while it waits. Failures are {@link dev.muster.RegistryUnavailableException} or {@link
 * dev.muster.AccessDeniedException}, naming the call, except {@link #status(Duration)}, which reports a member
 * that does not answer as a {@link MemberStatus} with a {@link MemberStatus#failure() failure}.
 */
public final class EtcdMaintenance implements AutoCloseable {
  /**
   * One member's answer to a status call made to {@code endpoint}. When it did not answer within the timeout, or
   * refused (etcd 3.5.28 to 3.5.31 answer the status call only to root once auth is on), {@code failure} says why
   * and the numbers are 0 (ids empty); {@code refused} tells a refusal, which names the grant it needs, from silence.
   *
   * @param memberId the answering member's id in hex, as {@code etcdctl} prints it
   * @param leaderId the leader's id in hex as this member sees it; empty (or "0") when it has none
   * @param errors the member's own errors (such as a NOSPACE alarm raised)
   */
  public record MemberStatus(URI endpoint, String failure, boolean refused, String memberId, String version, long dbSize,
      long dbSizeInUse, String leaderId, long raftTerm, long raftIndex, long raftAppliedIndex, boolean learner,
      List<String> errors) {
    public MemberStatus {
      Objects.requireNonNull(endpoint, "endpoint");
      errors = List.copyOf(errors);
    }

    /** A member that did not answer (within the timeout, or at all). */
    public static MemberStatus failed(URI endpoint, String failure) {
      return new MemberStatus(endpoint, failure, false, "", "", 0, 0, "", 0, 0, 0, false, List.of());
    }

    /** A member that answered by refusing the caller; {@code why} names the user and the grant it needs. */
    public static MemberStatus refused(URI endpoint, String why) {
      return new MemberStatus(endpoint, why, true, "", "", 0, 0, "", 0, 0, 0, false, List.of());
    }

    public boolean answered() {
      return failure == null;
    }

    public boolean isLeader() {
      return answered() && !memberId.isEmpty() && memberId.equals(leaderId);
    }
  }

  /** A member of the cluster as the member list names it; {@code id} in hex. */
  public record Member(String id, String name, List<URI> peerUrls, List<URI> clientUrls, boolean learner) {
    public Member {
      peerUrls = List.copyOf(peerUrls);
      clientUrls = List.copyOf(clientUrls);
    }
  }

  /** An alarm raised on a member ({@code type} is etcd's name: {@code NOSPACE} or {@code CORRUPT}). */
  public record Alarm(String memberId, String type) {}

  /** One key as etcd stores it: raw value bytes, its lease (0: none) and revisions. */
  public record StoredKey(String key, byte[] value, long lease, long createRevision, long modRevision,
      long version) {}

  /** The keys under a prefix at one revision. */
  public record Keys(long revision, List<StoredKey> keys) {
    public Keys {
      keys = List.copyOf(keys);
    }
  }

  /** A lease's granted TTL and what is left of it. */
  public record LeaseTtl(long id, Duration granted, Duration left) {}

  private final EtcdInspector inspector;

  private EtcdMaintenance(EtcdInspector inspector) {
    this.inspector = inspector;
  }

  /** Connects lazily (the first call opens the connection); never blocks. */
  public static EtcdMaintenance connect(EtcdConfig config) {
    return new EtcdMaintenance(new EtcdInspector(Objects.requireNonNull(config, "config")));
  }

  public EtcdConfig config() {
    return inspector.config();
  }

  /**
   * A status call to every endpoint of the config, all at once, each waiting at most {@code timeout}: a stopped
   * or frozen member is reported, never waited for beyond that. In the config's endpoint order.
   */
  public List<MemberStatus> status(Duration timeout) {
    return inspector.status(config().endpoints(), timeout);
  }

  /** The same for a list of endpoints, such as the member list's client URLs. */
  public List<MemberStatus> status(List<URI> endpoints, Duration timeout) {
    return inspector.status(endpoints, timeout);
  }

  /** The cluster's member list. */
  public List<Member> members() {
    return inspector.members();
  }

  /** The alarms raised, over all members. */
  public List<Alarm> alarms() {
    return inspector.alarms();
  }

  /**
   * Every key under {@code prefix} (any string, such as {@code config().layout().rootPrefix()}), values included,
   * at one revision.
   */
  public Keys keys(String prefix) {
    return inspector.keys(prefix);
  }

  /** The lease's granted TTL and time left; empty when it no longer exists. */
  public Optional<LeaseTtl> lease(long id) {
    return inspector.lease(id);
  }

  /**
   * Streams a snapshot of the backend of the member the client talks to into {@code out} (not closed here);
   * returns the bytes written. Waits at most {@code timeout} for the whole stream.
   */
  public long snapshot(OutputStream out, Duration timeout) {
    return inspector.snapshot(out, timeout);
  }

  /**
   * Sets the instance stored under {@code key} DRAINING, in place: the same value with the state changed, on the
   * key's own lease, written only if the key has not changed since it was read. Returns the instance as now stored
   * (unchanged when it already drained).
   *
   * @throws dev.muster.InvalidInputException when the key does not exist, its value is not an instance, it is
   *     signed (only its provider's key can change it: stop the provider with SIGTERM instead), or it changed while
   *     being drained (try again)
   */
  public Instance drain(InstanceKey key) {
    return inspector.drain(key);
  }

  @Override
  public void close() {
    inspector.close();
  }
}
