package dev.muster.chaos;

import dev.muster.DuplicateInstanceException;
import dev.muster.MusterException;
import dev.muster.etcd.EtcdRegistry;
import dev.muster.registry.Instance;
import dev.muster.registry.InstanceCodec;
import dev.muster.registry.RegistrarConfig;
import dev.muster.registry.Registration;
import dev.muster.registry.RegistrationEvent;
import dev.muster.registry.RegistrationListener;
import dev.muster.registry.RegistrationState;
import dev.muster.registry.RegistryLayout;
import io.etcd.jetcd.KeyValue;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.TreeMap;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.function.IntFunction;

/**
 * A schedule's registrations {@code r0..r5} (even in version v1, odd in v2) on its registry, and the steps on them:
 * register, deregister, update, and a duplicate of an id someone holds. It keeps what {@link QuietPoint} checks
 * ({@link #open()}), each registration's events, and the leases of closed registrations whose revoke failed.
 *
 * <p>Not thread-safe: the schedule's thread runs it (a registration's listener only appends to its event list).
 */
final class ScheduleRegistrations {
  private final String namespace;
  private final Oracle oracle;
  private final RegistryLayout layout;
  private final Tally tally;
  private final ChaosConfig config;
  /** The plain key {@code k<n>}'s instance (weight 1): what a duplicate copies when no registration holds r<n>. */
  private final IntFunction<Instance> plain;
  private final Map<Integer, Registration> open = new TreeMap<>();
  private final Map<Integer, List<RegistrationEvent>> events = new TreeMap<>();
  /** Leases of closed registrations whose revoke failed (etcd unreachable): their keys expire with them. */
  private final Map<Integer, Long> leftToExpire = new TreeMap<>();
  private EtcdRegistry registry;

  ScheduleRegistrations(String namespace, Oracle oracle, Tally tally, ChaosConfig config,
      IntFunction<Instance> plain) {
    this.namespace = namespace;
    this.oracle = oracle;
    this.layout = oracle.layout();
    this.tally = tally;
    this.config = config;
    this.plain = plain;
  }

  /** The registry to register on: the schedule's, through its fault proxies. */
  void use(EtcdRegistry schedulesRegistry) {
    this.registry = schedulesRegistry;
  }

  /** The registrations open now, by number: the map itself, which {@link QuietPoint} reads at every quiet point. */
  Map<Integer, Registration> open() {
    return open;
  }

  /** Closes every open registration at once (each waited for up to 30 s), then counts every event they had. */
  void closeAll() {
    List<CompletableFuture<Void>> closing = new ArrayList<>();
    open.values().forEach(r -> closing.add(r.closeAsync()));
    for (var f : closing) {
      try {
        f.get(30, TimeUnit.SECONDS);
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt(); // stop waiting; the leases expire by themselves
        break;
      } catch (ExecutionException | TimeoutException e) {
        // the lease expires by itself
      }
    }
  }

  /** Counts every event the schedule's registrations had, by type. */
  void tallyEvents() {
    events.values().forEach(list -> list.forEach(e -> tally.add("registration " + e.type().name().toLowerCase()
        .replace('_', ' '))));
  }

  private Instance registrationInstance(int n) {
    return Instance.of(ScheduleRun.SERVICE, "127.0.0." + (10 + n), 9000 + n).namespace(namespace)
        .version(n % 2 == 0 ? "v1" : "v2").id("r" + n).registeredAt(ScheduleRun.REGISTERED_AT);
  }

  /**
   * The registrations' config. The odd-numbered ones share the registry's lease ({@code RegistrarConfig
   * .sharedLease}), so every schedule with two of them runs a shared lease through its faults, and a duplicate of
   * one is refused on the registry that holds it.
   */
  private RegistrarConfig registrarConfig(int n, Duration drain) {
    return RegistrarConfig.builder().ttl(Duration.ofSeconds(2)).keepaliveInterval(Duration.ofMillis(500))
        .requestTimeout(Duration.ofMillis(500)).retryBase(Duration.ofMillis(50)).drain(drain)
        .startTimeout(config.bound()).shutdownHook(false).sharedLease(n % 2 == 1).signingKey(config.signingKey())
        .build();
  }

  String register(int n, int variant) {
    if (open.containsKey(n)) {
      return "r" + n + " is already registered";
    }
    List<RegistrationEvent> seen = new CopyOnWriteArrayList<>();
    RegistrationListener listener = seen::add;
    Instance instance = registrationInstance(n);
    RegistrarConfig rc = registrarConfig(n, variant == 0 ? Duration.ZERO : Duration.ofMillis(300));
    if (rc.sharedLease()) {
      tally.add("registrations on a shared lease");
    }
    Registration r;
    try {
      r = registry.register(instance, rc, listener);
    } catch (DuplicateInstanceException e) {
      // Only the closed r<n>, if its revoke failed, may still hold the key; it goes with that lease (which etcd
      // extends by its TTL at every restart meanwhile). Anyone else holding it is a divergence.
      Long orphan = leftToExpire.get(n);
      if (orphan == null || orphan != e.holderLease()) {
        throw new Divergence("r" + n + " was refused as a duplicate though no open registration holds it: "
            + e.getMessage());
      }
      awaitGone(layout.instanceKey(instance));
      tally.add("registrations that waited for a lease left to expire");
      r = registry.register(instance, rc, listener);
    }
    leftToExpire.remove(n);
    open.put(n, r);
    events.put(n, seen);
    tally.add("registrations");
    return "lease " + Long.toHexString(r.leaseId());
  }

  String deregister(int n) {
    Registration r = open.remove(n);
    if (r == null) {
      return "r" + n + " is not registered";
    }
    r.close();
    boolean revoked = events.getOrDefault(n, List.of()).stream()
        .anyMatch(e -> e.type() == RegistrationEvent.Type.REVOKED);
    if (!revoked) {
      leftToExpire.put(n, r.leaseId());
      tally.add("closes that could not revoke");
      return "closed, the revoke failed: the key expires with lease " + Long.toHexString(r.leaseId());
    }
    return "closed (" + r.state() + ")";
  }

  String update(int n, int weight) {
    Registration r = open.get(n);
    if (r == null) {
      return "r" + n + " is not registered";
    }
    try {
      r.update(i -> i.weight(weight)).get(config.bound().toMillis(), TimeUnit.MILLISECONDS);
      return "ok";
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      return "not applied: interrupted";
    } catch (ExecutionException | TimeoutException e) {
      return "not applied: " + e.getMessage(); // etcd may be down (another schedule's restart): not a divergence
    }
  }

  /**
   * Registers a second instance with an id someone holds. It must be refused and the holder's key left as it
   * was. If the holder had just lost its lease the key was free and the duplicate may take it: then etcd's history
   * must show the key absent just before, or the duplicate overwrote a live holder.
   */
  String duplicate(int n) {
    Registration holder = open.get(n);
    Instance target;
    if (holder != null) {
      target = holder.instance();
    } else {
      Optional<KeyValue> plainKey = oracle.get(layout.instanceKey(plain.apply(n % Step.KEYS)));
      if (plainKey.isEmpty()) {
        return "nothing holds r" + n + " or k" + (n % Step.KEYS);
      }
      target = plain.apply(n % Step.KEYS);
    }
    String key = layout.instanceKey(target);
    Instance impostor = target.address("127.0.1.1").port(9999);
    List<RegistrationEvent> seen = new CopyOnWriteArrayList<>();
    Registration dup;
    try {
      dup = registry.register(impostor, registrarConfig(n, Duration.ZERO).toBuilder()
          .startTimeout(Duration.ofSeconds(10)).build(), seen::add);
    } catch (DuplicateInstanceException e) {
      Optional<KeyValue> now = oracle.get(key);
      if (now.isPresent() && decodes(key, now.get()).map(i -> i.port() == 9999).orElse(false)) {
        throw new Divergence("a refused duplicate of " + key + " overwrote the holder's value");
      }
      tally.add("duplicates refused");
      return "refused (holder lease " + Long.toHexString(e.holderLease()) + ")";
    } catch (MusterException e) {
      tally.add("duplicates inconclusive");
      return "inconclusive: " + e.getMessage();
    }
    long revision = seen.stream().filter(e -> e.type() == RegistrationEvent.Type.REGISTERED).mapToLong(
        RegistrationEvent::revision).findFirst().orElse(0);
    Optional<Oracle.Snapshot> before = revision > 1 ? oracle.rangeAt(key, revision - 1) : Optional.empty();
    dup.close();
    if (before.isPresent() && before.get().leases().containsKey(key)) {
      throw new Divergence("a duplicate registration of " + key + " succeeded at revision " + revision
          + " while the key was held (lease " + Long.toHexString(before.get().leases().get(key)) + ")");
    }
    tally.add("duplicates granted a free key");
    if (holder != null) {
      awaitSettled(holder);
      if (holder.state() == RegistrationState.FAILED) {
        open.remove(n); // refused as a duplicate of the impostor while it held the key: by design
        return "the holder had lost its lease; the duplicate took the free key and displaced it";
      }
    }
    return "the key was free (the holder had lost its lease); the duplicate took it and was closed";
  }

  private void awaitGone(String key) {
    long deadline = System.nanoTime() + config.bound().toNanos();
    while (oracle.get(key).isPresent()) {
      if (System.nanoTime() - deadline > 0) {
        throw new Divergence(key + " outlived the lease left to expire by " + config.bound().toSeconds() + " s");
      }
      Oracle.sleep(Duration.ofMillis(100));
    }
  }

  private void awaitSettled(Registration r) {
    long deadline = System.nanoTime() + config.bound().toNanos();
    while (r.state() != RegistrationState.ACTIVE && r.state() != RegistrationState.FAILED
        && System.nanoTime() < deadline) {
      Oracle.sleep(Duration.ofMillis(50));
    }
  }

  private Optional<Instance> decodes(String key, KeyValue kv) {
    try {
      return Optional.of(InstanceCodec.decode(layout.parseKey(key), kv.getValue().getBytes()));
    } catch (MusterException e) {
      return Optional.empty();
    }
  }
}
