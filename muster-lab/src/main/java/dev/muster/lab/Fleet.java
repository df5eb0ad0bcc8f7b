package dev.muster.lab;

import com.fasterxml.jackson.databind.JsonNode;
import dev.muster.testing.ChildProcess;
import dev.muster.testing.JsonLog;
import dev.muster.testing.LeaseRemainder;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.Set;

/**
 * The usual cast of a scenario: providers {@code p1..pN} serving /hello, consumer A (ejection + retry), consumer B
 * (neither) and a watcher W, all on one service; or the same cast through gRPC ({@link #grpcProviders},
 * {@link #grpcConsumers}); plus the log arithmetic the scenarios share. A gRPC caller's {@code attempts} are the
 * instances that answered (grpc-call cannot see the channel's attempts), so {@link #attemptsTo} counts answers
 * there.
 */
public final class Fleet {
  public final String service;
  public final List<ChildProcess> providers = new ArrayList<>();
  public ChildProcess a;
  public ChildProcess b;
  public ChildProcess watcher;

  /** Whether the providers log every renewal ({@code register --log-keepalives}); grpc-serve's do not. */
  private final boolean logsRenewals;

  private Fleet(String service, boolean logsRenewals) {
    this.service = service;
    this.logsRenewals = logsRenewals;
  }

  /** Starts {@code n} providers and waits until each printed {@code registered}. */
  public static Fleet providers(LabContext ctx, String service, String endpoints, int n, String... extra) {
    return start(ctx, service, n, true, id -> ctx.provider(id, service, endpoints, extra));
  }

  /** {@link #providers}, provider {@code i} (from 1) with the arguments {@code extra.apply(i)} (e.g. its fault file). */
  public static Fleet providers(LabContext ctx, String service, String endpoints, int n,
      java.util.function.IntFunction<String[]> extra) {
    return start(ctx, service, n, true,
        id -> ctx.provider(id, service, endpoints, extra.apply(Integer.parseInt(id.substring(1)))));
  }

  /** Starts {@code n} gRPC providers ({@code muster grpc-serve}) and waits until each printed {@code registered}. */
  public static Fleet grpcProviders(LabContext ctx, String service, String endpoints, int n, String... extra) {
    return start(ctx, service, n, false, id -> ctx.grpcProvider(id, service, endpoints, extra));
  }

  /** {@link #grpcProviders}, provider {@code i} (from 1) with the arguments {@code extra.apply(i)}. */
  public static Fleet grpcProviders(LabContext ctx, String service, String endpoints, int n,
      java.util.function.IntFunction<String[]> extra) {
    return start(ctx, service, n, false,
        id -> ctx.grpcProvider(id, service, endpoints, extra.apply(Integer.parseInt(id.substring(1)))));
  }

  private static Fleet start(LabContext ctx, String service, int n, boolean logsRenewals,
      java.util.function.Function<String, ChildProcess> provider) {
    Fleet f = new Fleet(service, logsRenewals);
    for (int i = 1; i <= n; i++) {
      f.providers.add(provider.apply("p" + i));
    }
    for (ChildProcess p : f.providers) {
      ctx.await(p.name() + " registered", Duration.ofSeconds(30), () -> p.json().has("registered"));
    }
    return f;
  }

  public ChildProcess provider(int i) {
    return providers.get(i - 1);
  }

  /**
   * How many calls in a row a caller must have made ok at the first attempt, every provider among them, before a
   * scenario starts its fault ({@link #awaitWarm}); the report marks the moment.
   */
  public static final int WARM_CALLS = 30;

  /**
   * Starts A, B and W (each may be skipped), each with the {@code extra} arguments (e.g. TLS and credential flags),
   * and waits until the callers are {@linkplain #warm warm}.
   */
  public Fleet consumers(LabContext ctx, String endpoints, boolean withA, boolean withB, boolean withWatcher,
      String... extra) {
    if (withA) {
      a = ctx.consumer("consumer-a", service, endpoints, true, extra);
    }
    if (withB) {
      b = ctx.consumer("consumer-b", service, endpoints, false, extra);
    }
    return watchAndWarm(ctx, endpoints, withWatcher, extra);
  }

  /**
   * The gRPC cast, through {@code muster grpc-call} on a {@code muster:///} channel: A with the {@code muster}
   * policy (ejection, and the lab's retries of the idempotent Say), B with grpc-java's {@code round_robin} and no
   * retry; each calls every {@code callInterval}, each attempt within {@code attemptTimeout} (see
   * {@link LabContext#grpcConsumer}), with the {@code extra} arguments (e.g. {@code --delay}). W is
   * {@code muster watch}, without them. Waits until A and B are warm.
   */
  public Fleet grpcConsumers(LabContext ctx, String endpoints, boolean withA, boolean withB, boolean withWatcher,
      Duration attemptTimeout, String... extra) {
    if (withA) {
      a = ctx.grpcConsumer("consumer-a", service, endpoints, "muster", ctx.params().maxRetries(), attemptTimeout,
          extra);
    }
    if (withB) {
      b = ctx.grpcConsumer("consumer-b", service, endpoints, "round_robin", 0, attemptTimeout, extra);
    }
    return watchAndWarm(ctx, endpoints, withWatcher);
  }

  private Fleet watchAndWarm(LabContext ctx, String endpoints, boolean withWatcher, String... watcherExtra) {
    if (withWatcher) {
      watcher = ctx.watcher("watcher", service, endpoints, watcherExtra);
      ctx.await("the watcher's snapshot", Duration.ofSeconds(30), () -> watcher.json().has("snapshot"));
    }
    awaitWarm(ctx, java.util.Arrays.stream(new ChildProcess[] {a, b}).filter(java.util.Objects::nonNull)
        .toArray(ChildProcess[]::new));
    return this;
  }

  /** Waits until every caller is {@linkplain #warm warm} against this fleet's providers. */
  public void awaitWarm(LabContext ctx, ChildProcess... callers) {
    List<String> ids = providers.stream().map(ChildProcess::name).toList();
    for (ChildProcess c : callers) {
      ctx.await(c.name() + " warm (" + WARM_CALLS + " calls in a row ok at the first attempt, every provider among"
          + " them)", Duration.ofSeconds(60), () -> warm(c, WARM_CALLS, ids));
    }
  }

  // ---- log arithmetic ---------------------------------------------------------------------------------

  /** The caller's {@code call} lines that started in {@code [from, to)}. */
  public static List<JsonNode> calls(ChildProcess caller, Instant from, Instant to) {
    return caller.json().events("call").stream().filter(n -> {
      Instant t = JsonLog.ts(n);
      return !t.isBefore(from) && t.isBefore(to);
    }).toList();
  }

  /**
   * The calls of {@code calls} (a caller's {@code call} lines) in flight at {@code t}: started before it, ended after
   * it. A crash at {@code t} meets these on their connection; {@link #calls} from {@code t} does not list them.
   */
  public static List<JsonNode> inFlightAt(List<JsonNode> calls, Instant t) {
    return calls.stream().filter(n -> JsonLog.ts(n).isBefore(t) && ended(n).isAfter(t)).toList();
  }

  /** When a call ended: its start ({@code ts}) plus its latency. */
  public static Instant ended(JsonNode call) {
    return JsonLog.ts(call).plusNanos(call.path("latency_us").asLong() * 1000);
  }

  public static long failed(List<JsonNode> calls) {
    return calls.stream().filter(n -> !n.path("ok").asBoolean()).count();
  }

  /**
   * The failed calls of {@code calls} other than those that timed out (Muster's attempt timeout or the HTTP client's
   * own): where every provider serves, those are what the routing decided (no endpoint, a refused connection, an
   * error status), while a timeout is the machine's load.
   */
  public static long failedOtherThanTimeout(List<JsonNode> calls) {
    return calls.stream().filter(n -> !n.path("ok").asBoolean())
        .filter(n -> !n.path("error").asText().contains("TimeoutException")).count();
  }

  /**
   * The failed calls of {@code calls} that the routing decided while the instances {@code stale} do not answer: all
   * but those that met a serving provider's load. Retrying around a stale instance is the routing's job, so a call
   * whose attempts all went to stale instances (or that had none to try) counts. A failed call's earlier attempts all
   * failed, so one that tried a serving provider before its last attempt failed there too; its line prints only the
   * last attempt's error, and when that attempt went to a serving provider it must be a timeout to be let off (a
   * refused connection or an error status from a provider that serves is the routing's). Under a loaded suite both
   * kinds happened: a last attempt timed out on a serving provider, and a first attempt did so with the retry going to
   * the provider frozen a few milliseconds before.
   */
  public static long failedExceptLoadOnServing(List<JsonNode> calls, Set<String> stale) {
    return calls.stream().filter(n -> !n.path("ok").asBoolean()).filter(n -> !metLoadOnServing(n, stale)).count();
  }

  private static boolean metLoadOnServing(JsonNode call, Set<String> stale) {
    List<String> attempts = new ArrayList<>();
    call.path("attempts").forEach(a -> attempts.add(a.asText()));
    if (attempts.isEmpty()) {
      return false;
    }
    String last = attempts.get(attempts.size() - 1);
    boolean servingBeforeLast = attempts.subList(0, attempts.size() - 1).stream().anyMatch(a -> !stale.contains(a));
    return servingBeforeLast
        || (!stale.contains(last) && call.path("error").asText().contains("TimeoutException"));
  }

  /**
   * The failed calls of {@code calls}, each as its error, the instances it tried and its latency (at most 3, then
   * how many more), in brackets after a space; empty when none failed. Lets a result name why a call failed.
   */
  public static String failures(List<JsonNode> calls) {
    List<String> each = calls.stream().filter(n -> !n.path("ok").asBoolean())
        .map(n -> n.path("error").asText("no error text") + " via " + n.path("attempts") + " after "
            + n.path("latency_us").asLong() / 1000 + " ms")
        .toList();
    if (each.isEmpty()) {
      return "";
    }
    String shown = String.join("; ", each.subList(0, Math.min(3, each.size())));
    return " [" + shown + (each.size() > 3 ? "; " + (each.size() - 3) + " more" : "") + "]";
  }

  public static long attemptsTo(List<JsonNode> calls, String id) {
    long c = 0;
    for (JsonNode n : calls) {
      for (JsonNode a : n.path("attempts")) {
        if (a.asText().equals(id)) {
          c++;
        }
      }
    }
    return c;
  }

  /** When the watcher first printed a set without {@code id}, at or after {@code after}. */
  public static Optional<Instant> removedAt(ChildProcess watcher, String id, Instant after) {
    return watcher.json().lines().stream()
        .filter(n -> n.has("instances") && !JsonLog.ts(n).isBefore(after) && !JsonLog.ids(n).contains(id))
        .map(JsonLog::ts).findFirst();
  }

  /**
   * Waits up to {@code limit} for this fleet's watcher to print a set without {@code id} at or after {@code after},
   * and returns when it did; fails the scenario after the limit.
   */
  public Instant awaitRemoved(LabContext ctx, String id, Instant after, Duration limit) {
    ctx.await("the watcher drops " + id, limit, () -> removedAt(watcher, id, after).isPresent());
    return removedAt(watcher, id, after).orElseThrow();
  }

  /**
   * When {@code p} (a watcher, or a caller printing its cache's sets) first printed a set listing {@code id} as
   * {@code DRAINING}, at or after {@code after}.
   */
  public static Optional<Instant> drainingAt(ChildProcess p, String id, Instant after) {
    return p.json().lines().stream().filter(n -> n.has("instances") && !JsonLog.ts(n).isBefore(after))
        .filter(n -> {
          for (JsonNode i : n.path("instances")) {
            if (i.path("id").asText().equals(id) && i.path("state").asText().equals("DRAINING")) {
              return true;
            }
          }
          return false;
        }).map(JsonLog::ts).findFirst();
  }

  /** When the watcher first printed a set with {@code id}, at or after {@code after}. */
  public static Optional<Instant> presentAt(ChildProcess watcher, String id, Instant after) {
    return watcher.json().lines().stream()
        .filter(n -> n.has("instances") && !JsonLog.ts(n).isBefore(after) && JsonLog.ids(n).contains(id))
        .map(JsonLog::ts).findFirst();
  }

  /** The last set the watcher printed. */
  public static List<String> lastSet(ChildProcess watcher) {
    List<JsonNode> lines = watcher.json().lines().stream().filter(n -> n.has("instances")).toList();
    return lines.isEmpty() ? List.of() : JsonLog.ids(lines.get(lines.size() - 1));
  }

  /**
   * The caller is warm: its last {@code n} calls succeeded at their first attempt and reached every provider, so no
   * endpoint is ejected from the cold start (a fresh JVM times out some first 300 ms attempts) when a fault begins;
   * and every call it started before those has ended. Lines are logged as calls end, so the last {@code n} can be
   * fresh calls while a cold one is still in flight on its retry: a lab run of f4e053a (grpc_kill9_stale_window,
   * docs/lab-failures/issue36-stop50-grpc_kill9_stale_window) had three of A's first calls time out their 1.5 s first
   * attempt on the cold process, retry, and meet the SIGKILL on that retry, the one the lab allows; a fault after
   * warm-up is meant to meet calls that still have their retry. ({@code grpc-call} lists only the instance that
   * answered as the attempts; its {@code retried} says whether there were more.)
   */
  public static boolean warm(ChildProcess caller, int n, List<String> providerIds) {
    List<JsonNode> calls = caller.json().events("call");
    if (calls.size() < n) {
      return false;
    }
    java.util.Set<String> reached = new java.util.HashSet<>();
    long oldest = Long.MAX_VALUE;
    for (JsonNode c : calls.subList(calls.size() - n, calls.size())) {
      if (!c.path("ok").asBoolean() || c.path("attempts").size() != 1 || c.path("retried").asBoolean()) {
        return false;
      }
      reached.add(c.path("attempts").get(0).asText());
      oldest = Math.min(oldest, c.path("seq").asLong());
    }
    return reached.containsAll(providerIds) && noneInFlightBefore(calls, oldest);
  }

  /** Whether every call numbered below {@code seq} (calls are numbered from 1 as they start) has logged its end. */
  static boolean noneInFlightBefore(List<JsonNode> calls, long seq) {
    java.util.BitSet ended = new java.util.BitSet();
    for (JsonNode c : calls) {
      long s = c.path("seq").asLong();
      if (s >= 1 && s < seq) {
        ended.set((int) s);
      }
    }
    return seq <= 1 || ended.cardinality() == seq - 1;
  }

  /**
   * One stale window, {@code fault} → the watcher's {@code removed}, split by muster-testing's
   * {@link LeaseRemainder} rule from the provider's renewals (no split when it logged none before the fault).
   */
  public static StaleWindow window(ChildProcess provider, Instant fault, Instant removed, Duration ttl) {
    long window = millis(fault, removed);
    return LeaseRemainder.expiry(provider.json(), fault, ttl)
        .map(expiry -> StaleWindow.split(window, millis(fault, expiry)))
        .orElse(StaleWindow.unsplit(window));
  }

  /**
   * {@link #window} for one of this fleet's providers; not split when they log no renewals (a gRPC provider logs
   * only its registration, and splitting from that would put the lease's end long before the fault).
   */
  public StaleWindow staleWindow(ChildProcess provider, Instant fault, Instant removed, Duration ttl) {
    return logsRenewals ? window(provider, fault, removed, ttl) : StaleWindow.unsplit(millis(fault, removed));
  }

  public static long millis(Instant from, Instant to) {
    return Duration.between(from, to).toMillis();
  }
}
