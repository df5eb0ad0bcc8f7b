package dev.muster.lab;

import com.fasterxml.jackson.databind.JsonNode;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;

/**
 * The usual cast of a scenario: providers {@code p1..pN} serving /hello, consumer A (ejection + retry), consumer B
 * (neither) and a watcher W, all on one service; plus the log arithmetic the scenarios share.
 */
public final class Fleet {
  public final String service;
  public final List<LabProcess> providers = new ArrayList<>();
  public LabProcess a;
  public LabProcess b;
  public LabProcess watcher;

  private Fleet(String service) {
    this.service = service;
  }

  /** Starts {@code n} providers and waits until each printed {@code registered}. */
  public static Fleet providers(LabContext ctx, String service, String endpoints, int n, String... extra) {
    Fleet f = new Fleet(service);
    for (int i = 1; i <= n; i++) {
      f.providers.add(ctx.provider("p" + i, service, endpoints, extra));
    }
    for (LabProcess p : f.providers) {
      ctx.await(p.name() + " registered", Duration.ofSeconds(30), () -> p.json().has("registered"));
    }
    return f;
  }

  public LabProcess provider(int i) {
    return providers.get(i - 1);
  }

  /** Starts A, B and W (each may be skipped) and waits until the callers are warm: 20 calls in a row ok. */
  public Fleet consumers(LabContext ctx, String endpoints, boolean withA, boolean withB, boolean withWatcher) {
    if (withA) {
      a = ctx.consumer("consumer-a", service, endpoints, true);
    }
    if (withB) {
      b = ctx.consumer("consumer-b", service, endpoints, false);
    }
    if (withWatcher) {
      watcher = ctx.watcher("watcher", service, endpoints);
      ctx.await("the watcher's snapshot", Duration.ofSeconds(30), () -> watcher.json().has("snapshot"));
    }
    awaitWarm(ctx, java.util.Arrays.stream(new LabProcess[] {a, b}).filter(java.util.Objects::nonNull)
        .toArray(LabProcess[]::new));
    return this;
  }

  /** Waits until every caller is {@linkplain #warm warm} against this fleet's providers. */
  public void awaitWarm(LabContext ctx, LabProcess... callers) {
    List<String> ids = providers.stream().map(LabProcess::name).toList();
    for (LabProcess c : callers) {
      ctx.await(c.name() + " warm (30 calls in a row ok at the first attempt, every provider among them)",
          Duration.ofSeconds(60), () -> warm(c, 30, ids));
    }
  }

  // ---- log arithmetic ---------------------------------------------------------------------------------

  /** The caller's {@code call} lines that started in {@code [from, to)}. */
  public static List<JsonNode> calls(LabProcess caller, Instant from, Instant to) {
    return caller.json().events("call").stream().filter(n -> {
      Instant t = JsonLog.ts(n);
      return !t.isBefore(from) && t.isBefore(to);
    }).toList();
  }

  public static long failed(List<JsonNode> calls) {
    return calls.stream().filter(n -> !n.path("ok").asBoolean()).count();
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
  public static Optional<Instant> removedAt(LabProcess watcher, String id, Instant after) {
    return watcher.json().lines().stream()
        .filter(n -> n.has("instances") && !JsonLog.ts(n).isBefore(after) && !JsonLog.ids(n).contains(id))
        .map(JsonLog::ts).findFirst();
  }

  /** When the watcher first printed a set with {@code id}, at or after {@code after}. */
  public static Optional<Instant> presentAt(LabProcess watcher, String id, Instant after) {
    return watcher.json().lines().stream()
        .filter(n -> n.has("instances") && !JsonLog.ts(n).isBefore(after) && JsonLog.ids(n).contains(id))
        .map(JsonLog::ts).findFirst();
  }

  /** The last set the watcher printed. */
  public static List<String> lastSet(LabProcess watcher) {
    List<JsonNode> lines = watcher.json().lines().stream().filter(n -> n.has("instances")).toList();
    return lines.isEmpty() ? List.of() : JsonLog.ids(lines.get(lines.size() - 1));
  }

  /**
   * The caller is warm: its last {@code n} calls succeeded at their first attempt and reached every provider, so no
   * endpoint is ejected from the cold start (a fresh JVM times out some first 300 ms attempts) when a fault begins.
   */
  public static boolean warm(LabProcess caller, int n, List<String> providerIds) {
    List<JsonNode> calls = caller.json().events("call");
    if (calls.size() < n) {
      return false;
    }
    java.util.Set<String> reached = new java.util.HashSet<>();
    for (JsonNode c : calls.subList(calls.size() - n, calls.size())) {
      if (!c.path("ok").asBoolean() || c.path("attempts").size() != 1) {
        return false;
      }
      reached.add(c.path("attempts").get(0).asText());
    }
    return reached.containsAll(providerIds);
  }

  /**
   * When the provider's lease would expire if nothing renewed it after {@code fault}: its last renewal (a
   * {@code keepalive} line with the TTL granted, or the registration) before the fault, plus that TTL.
   */
  public static Optional<Instant> leaseExpiry(LabProcess provider, Instant fault, Duration ttl) {
    Instant last = null;
    Duration granted = ttl;
    for (JsonNode n : provider.json().lines()) {
      String e = n.path("event").asText();
      if ((e.equals("keepalive") || e.equals("registered") || e.equals("reregistered"))
          && JsonLog.ts(n).isBefore(fault)) {
        last = JsonLog.ts(n);
        String detail = n.path("detail").asText();
        if (detail.startsWith("ttl ") && detail.endsWith("s")) {
          granted = Duration.ofSeconds(Long.parseLong(detail.substring(4, detail.length() - 1)));
        } else {
          granted = ttl;
        }
      }
    }
    return last == null ? Optional.empty() : Optional.of(last.plus(granted));
  }

  /** "window W ms = lease remainder L + detection/delivery D" for one stale window. */
  public static String split(LabProcess provider, Instant fault, Instant removed, Duration ttl) {
    long window = millis(fault, removed);
    return leaseExpiry(provider, fault, ttl)
        .map(expiry -> window + " = " + millis(fault, expiry) + " + " + millis(expiry, removed))
        .orElse(Long.toString(window));
  }

  public static long millis(Instant from, Instant to) {
    return Duration.between(from, to).toMillis();
  }
}
