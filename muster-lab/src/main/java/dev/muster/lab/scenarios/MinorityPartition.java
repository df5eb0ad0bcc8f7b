package dev.muster.lab.scenarios;

import com.fasterxml.jackson.databind.JsonNode;
import dev.muster.lab.Fleet;
import dev.muster.lab.LabContext;
import dev.muster.lab.Scenario;
import dev.muster.lab.ScenarioResult;
import dev.muster.registry.RegistryLayout;
import dev.muster.testing.ChildProcess;
import dev.muster.testing.EtcdCluster;
import dev.muster.testing.EtcdMember;
import dev.muster.testing.JsonLog;
import io.etcd.jetcd.ByteSequence;
import io.etcd.jetcd.Client;
import io.etcd.jetcd.KeyValue;
import io.etcd.jetcd.kv.GetResponse;
import io.etcd.jetcd.options.GetOption;
import io.grpc.CallOptions;
import io.grpc.Channel;
import io.grpc.ClientCall;
import io.grpc.ClientInterceptor;
import io.grpc.MethodDescriptor;
import io.grpc.Status;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.function.BooleanSupplier;

/**
 * A 3-member cluster loses its majority: m1 and m2 are SIGKILLed and m0 survives alone. The three providers talk to
 * m0 only, and an in-process jetcd client pinned to m0 (no retries, a 3 s gRPC deadline on every call, as
 * {@code etcdctl --command-timeout=3s}) probes what a minority member still does: a linearizable read and a put
 * must fail, a serializable read must still return the providers' keys, and the providers' keepalives must fail
 * (their logs say {@code unreachable}). Then m1 and m2 come back: the keys must still be there under the leases
 * the providers held (nobody re-registered), the failed put must not have been applied, and a put works again.
 * Each check is reported as ok or FAILED.
 *
 * <p>Reported, not judged: a second put sent without a gRPC deadline and abandoned after 3.5 s on the client side
 * (how a jetcd future is usually awaited: {@code future.get(timeout)}; cancelling the future does not cancel the
 * call). etcd keeps such a request pending and may commit it once a leader is back: a write the client counted
 * as failed can appear after the heal.
 */
public final class MinorityPartition implements Scenario {
  private static final Duration OP_TIMEOUT = Duration.ofSeconds(3);
  /** How long the scenario waits for a call: longer than the deadline, so the deadline's own error is seen. */
  private static final Duration WAIT = OP_TIMEOUT.plusMillis(500);
  private static final String DEADLINE_KEY = "/lab/minority_partition/deadline";
  private static final String ABANDONED_KEY = "/lab/minority_partition/abandoned";

  @Override
  public String name() {
    return "minority_partition";
  }

  @Override
  public String shows() {
    return "m1, m2 killed, m0 alone: what a minority member still serves; after the heal keys and leases remain";
  }

  @Override
  public String seed() {
    return "linearizable read / write / keepalive fail, serializable read works; after majority returns keys and"
        + " leases remain";
  }

  @Override
  public ScenarioResult run(LabContext ctx) throws InterruptedException {
    EtcdCluster etcd = ctx.etcd(3);
    EtcdMember survivor = etcd.member(0);
    String prefix = RegistryLayout.defaults().servicePrefix("default", "hello");
    Fleet f = Fleet.providers(ctx, "hello", survivor.clientUrl().toString(), 3);
    List<String> checks = new ArrayList<>();
    boolean pass;
    // No client-side retries: a retried put could land after the heal and look like a server-side effect.
    Client client = Client.builder().endpoints(survivor.clientUrl()).waitForReady(false).retryMaxAttempts(0)
        .interceptor(new Deadline(OP_TIMEOUT)).build();
    Client abandoning = Client.builder().endpoints(survivor.clientUrl()).waitForReady(false).retryMaxAttempts(0)
        .build();
    try {
      Outcome before = attempt(client.getKVClient().get(bytes(prefix), prefixOption(false)));
      pass = check(checks, "before: linearizable get works", before.ok(), before.how());

      String leaderBefore = etcd.leader().map(EtcdMember::name).orElse("none");
      Instant partitioned = Instant.now();
      Map<String, Long> registered = new TreeMap<>();
      for (ChildProcess p : f.providers) {
        registered.put(p.name(), leaseAt(p, partitioned));
      }
      long lostBefore = f.providers.stream().filter(p -> !p.json().events("lease_lost").isEmpty()).count();
      etcd.killMajority();
      Outcome linearizable = attempt(client.getKVClient().get(bytes(prefix), prefixOption(false)));
      pass &= check(checks, "partition (m1, m2 SIGKILL; client on m0): linearizable get fails", !linearizable.ok(),
          linearizable.how());
      Outcome put = attempt(client.getKVClient().put(bytes(DEADLINE_KEY), bytes("written during the partition")));
      pass &= check(checks, "put fails", !put.ok(), put.how());
      Outcome abandoned = attempt(abandoning.getKVClient().put(bytes(ABANDONED_KEY), bytes("abandoned")));
      Map<String, Long> serializable = new TreeMap<>();
      Outcome local = attempt(client.getKVClient().get(bytes(prefix), prefixOption(true)), serializable);
      boolean same = serializable.equals(registered);
      pass &= check(checks, "serializable get works", local.ok() && same,
          serializable.size() + " keys" + (same ? ", the registered leases" : " " + serializable) + ", " + local.how());
      waitUpTo(ctx, Duration.ofSeconds(20),
          () -> f.providers.stream().allMatch(p -> since(p, "unreachable", partitioned) != null));
      List<Instant> unreachable = f.providers.stream().map(p -> since(p, "unreachable", partitioned))
          .filter(t -> t != null).toList();
      pass &= check(checks, "keepalive fails", unreachable.size() == f.providers.size(), unreachable.size() + "/"
          + f.providers.size() + " providers unreachable, first " + unreachable.stream()
          .mapToLong(t -> Fleet.millis(partitioned, t)).min().orElse(-1) + " ms after the kill");

      Instant healStart = Instant.now();
      etcd.bringBackAll();
      Instant healed = Instant.now();
      waitUpTo(ctx, Duration.ofSeconds(30),
          () -> f.providers.stream().allMatch(p -> since(p, "reconnected", healStart) != null
              || since(p, "reregistered", partitioned) != null));
      // Longer than the TTL: a lease that survived only on paper would expire now.
      ctx.sleep(ctx.params().ttl().plusSeconds(1));
      Map<String, Long> after = new TreeMap<>();
      Outcome read = attempt(client.getKVClient().get(bytes(prefix), prefixOption(false)), after);
      boolean remain = after.equals(registered);
      pass &= check(checks, "majority back after " + Fleet.millis(healStart, healed) + " ms: keys and leases remain",
          read.ok() && remain, after.size() + " keys" + (remain ? " under the leases held at the partition"
              : " " + after + " vs " + registered));
      long reregistered = f.providers.stream().filter(p -> since(p, "reregistered", partitioned) != null
          || since(p, "lease_lost", partitioned) != null).count();
      pass &= check(checks, "nobody re-registered", reregistered == 0, reregistered + " lease_lost/reregistered"
          + " since the partition" + (lostBefore == 0 ? "" : "; " + lostBefore + " provider(s) had lost a lease"
          + " before it, during start-up"));
      Outcome putAfter = attempt(client.getKVClient().put(bytes("/lab/minority_partition/after"), bytes("healed")));
      pass &= check(checks, "put works", putAfter.ok(), putAfter.how());
      Map<String, Long> deadlineKey = new TreeMap<>();
      Outcome deadlineRead = attempt(client.getKVClient().get(bytes(DEADLINE_KEY)), deadlineKey);
      pass &= check(checks, "the put that failed (gRPC deadline) was not applied later",
          deadlineRead.ok() && deadlineKey.isEmpty(), deadlineKey.isEmpty() ? "absent" : "PRESENT");
      Map<String, Long> abandonedKey = new TreeMap<>();
      attempt(client.getKVClient().get(bytes(ABANDONED_KEY)), abandonedKey);
      checks.add("not judged: a put without a gRPC deadline, abandoned client-side ("
          + (abandoned.ok() ? "it answered: " : "") + abandoned.how() + "), was "
          + (abandonedKey.isEmpty() ? "not applied" : "APPLIED") + " after the heal (leader before the partition: "
          + leaderBefore + ")");
    } finally {
      client.close();
      abandoning.close();
    }
    return ScenarioResult.of(this, pass, String.join("; ", checks),
        "minority: linearizable get, put and keepalive fail, serializable get works; after the heal the keys remain"
            + " under their leases, nobody re-registered, the failed put did not appear, a put works");
  }

  /** Waits until {@code condition} holds or {@code limit} passed; does not fail, the caller checks. */
  private static void waitUpTo(LabContext ctx, Duration limit, BooleanSupplier condition) {
    long deadline = System.nanoTime() + limit.toNanos();
    while (!condition.getAsBoolean() && System.nanoTime() < deadline) {
      ctx.sleep(Duration.ofMillis(50));
    }
  }

  private static boolean check(List<String> checks, String what, boolean ok, String detail) {
    checks.add(what + ": " + (ok ? "ok" : "FAILED") + " (" + detail + ")");
    return ok;
  }

  /** The lease the provider held at {@code t}: that of its last registered or reregistered line before t. */
  private static long leaseAt(ChildProcess p, Instant t) {
    long lease = 0;
    for (JsonNode n : p.json().lines()) {
      String event = n.path("event").asText();
      if (JsonLog.ts(n).isBefore(t) && (event.equals("registered") || event.equals("reregistered"))) {
        lease = n.path("lease").asLong();
      }
    }
    return lease;
  }

  private static Instant since(ChildProcess p, String event, Instant after) {
    return p.json().events(event).stream().map(JsonLog::ts).filter(t -> !t.isBefore(after)).findFirst()
        .orElse(null);
  }

  private static GetOption prefixOption(boolean serializable) {
    return GetOption.builder().isPrefix(true).withSerializable(serializable).build();
  }

  private static ByteSequence bytes(String s) {
    return ByteSequence.from(s, StandardCharsets.UTF_8);
  }

  /** Gives every call a gRPC deadline, so that etcd sees the cancellation when the client gives up. */
  private static final class Deadline implements ClientInterceptor {
    private final Duration timeout;

    Deadline(Duration timeout) {
      this.timeout = timeout;
    }

    @Override
    public <Q, R> ClientCall<Q, R> interceptCall(MethodDescriptor<Q, R> method, CallOptions options, Channel next) {
      return next.newCall(method, options.withDeadlineAfter(timeout.toMillis(), TimeUnit.MILLISECONDS));
    }
  }

  /** How one etcd call ended: ok, or failed with the error (or the timeout) and how long it took. */
  private record Outcome(boolean ok, String how) {}

  private static Outcome attempt(CompletableFuture<?> call) throws InterruptedException {
    return attempt(call, null);
  }

  /** Waits up to {@link #WAIT}; a get's keys go into {@code keys} as instance id to lease. */
  private static Outcome attempt(CompletableFuture<?> call, Map<String, Long> keys) throws InterruptedException {
    long start = System.nanoTime();
    try {
      Object response = call.get(WAIT.toMillis(), TimeUnit.MILLISECONDS);
      if (keys != null && response instanceof GetResponse get) {
        for (KeyValue kv : get.getKvs()) {
          String key = kv.getKey().toString(StandardCharsets.UTF_8);
          keys.put(key.substring(key.lastIndexOf('/') + 1), kv.getLease());
        }
      }
      return new Outcome(true, "answered in " + elapsed(start) + " ms");
    } catch (TimeoutException e) {
      call.cancel(true);
      return new Outcome(false, "no answer within " + WAIT.toMillis() + " ms, given up");
    } catch (ExecutionException e) {
      Throwable cause = e.getCause() == null ? e : e.getCause();
      return new Outcome(false, "error after " + elapsed(start) + " ms: " + describe(cause));
    }
  }

  /** The gRPC status code, and etcd's own words when it gave any ("etcdserver: no leader"). */
  private static String describe(Throwable t) {
    Status status = Status.fromThrowable(t);
    String d = status.getDescription();
    if (status.getCode() == Status.Code.UNKNOWN || d == null || status.getCode() == Status.Code.DEADLINE_EXCEEDED) {
      return status.getCode() == Status.Code.UNKNOWN ? String.valueOf(t.getMessage()) : status.getCode().name();
    }
    return status.getCode() + " (" + (d.length() > 80 ? d.substring(0, 80) + "..." : d) + ")";
  }

  private static long elapsed(long startNanos) {
    return (System.nanoTime() - startNanos) / 1_000_000;
  }
}
