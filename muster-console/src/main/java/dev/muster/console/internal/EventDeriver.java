package dev.muster.console.internal;

import dev.muster.cache.EndpointDelta;
import dev.muster.registry.Instance;
import dev.muster.registry.InstanceKey;
import dev.muster.registry.InstanceState;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;

/**
 * Turns one service's cache deltas into the console's events. A cache says "added, removed, changed"; an operator
 * wants "joined, drained, left, lost its lease, came back": a removal after DRAINING is a {@code leave} (the
 * registrar's graceful stop drains first), a removal of an instance that never drained is {@code lease-lost} (a
 * killed provider's lease expired, or its key was deleted), and an id removed earlier that is added again is a
 * {@code re-register} (a provider that lost its lease and registered anew, with a new lease).
 *
 * <p>Not thread-safe: one deriver per cache, called only on that cache's notifier (a listener's calls are
 * serialized there).
 */
final class EventDeriver {
  /** How many departed ids are remembered to recognise a re-registration. */
  static final int REMEMBERED = 1000;

  private final String namespace;
  private final String service;
  private final Set<InstanceKey> departed = new LinkedHashSet<>();
  // the last value seen of each instance, to say what a change changed
  private final Map<InstanceKey, Instance> previous = new HashMap<>();

  EventDeriver(String namespace, String service) {
    this.namespace = namespace;
    this.service = service;
  }

  List<ConsoleEvent.Draft> onChange(EndpointDelta delta) {
    List<ConsoleEvent.Draft> out = new ArrayList<>();
    if (delta.kind() == EndpointDelta.Kind.RESYNC) {
      out.add(serviceEvent("resync", "the set was replaced by a fresh read: +" + delta.added().size() + " -"
          + delta.removed().size() + " ~" + delta.changed().size()));
    }
    for (Instance i : delta.added()) {
      if (departed.remove(i.key())) {
        out.add(event("re-register", i, "back after leaving, state " + i.state()));
      } else {
        out.add(event("join", i, i.address() + ":" + i.port() + ", state " + i.state()
            + (delta.kind() == EndpointDelta.Kind.SNAPSHOT ? " (first snapshot)" : "")));
      }
    }
    for (Instance i : delta.removed()) {
      remember(i.key());
      out.add(i.state() == InstanceState.DRAINING
          ? event("leave", i, "removed after draining")
          : event("lease-lost", i, "removed while " + i.state() + ", without draining: its lease expired or its key"
              + " was deleted"));
    }
    for (Instance i : delta.changed()) {
      out.add(changeEvent(previous.get(i.key()), i));
    }
    track(delta);
    return out;
  }

  ConsoleEvent.Draft onStale(Instant since, String reason) {
    return serviceEvent("stale", "etcd unreachable since " + since + ": " + reason);
  }

  ConsoleEvent.Draft onRecovered(Duration staleFor) {
    return serviceEvent("fresh", "watching again after " + staleFor.toMillis() + " ms stale");
  }

  ConsoleEvent.Draft onFailed(String why) {
    return serviceEvent("failed", "the cache stopped for good: " + why);
  }

  private void track(EndpointDelta delta) {
    delta.removed().forEach(i -> previous.remove(i.key()));
    delta.added().forEach(i -> previous.put(i.key(), i));
    delta.changed().forEach(i -> previous.put(i.key(), i));
  }

  private ConsoleEvent.Draft changeEvent(Instance was, Instance now) {
    if (was != null && was.state() != now.state()) {
      if (now.state() == InstanceState.DRAINING) {
        return event("drain", now, was.state() + " -> DRAINING");
      }
      if (now.state() == InstanceState.UP) {
        return event("up", now, was.state() + " -> UP");
      }
    }
    return event("change", now, was == null ? "value changed" : describe(was, now));
  }

  private static String describe(Instance was, Instance now) {
    List<String> parts = new ArrayList<>();
    if (was.state() != now.state()) {
      parts.add("state " + was.state() + " -> " + now.state());
    }
    if (was.weight() != now.weight()) {
      parts.add("weight " + was.weight() + " -> " + now.weight());
    }
    if (!was.address().equals(now.address()) || was.port() != now.port()) {
      parts.add("address " + was.address() + ":" + was.port() + " -> " + now.address() + ":" + now.port());
    }
    if (!Objects.equals(was.zone(), now.zone())) {
      parts.add("zone " + was.zone() + " -> " + now.zone());
    }
    if (!was.tags().equals(now.tags())) {
      parts.add("tags " + was.tags() + " -> " + now.tags());
    }
    if (!was.metadata().equals(now.metadata())) {
      parts.add("metadata changed");
    }
    if (!Objects.equals(was.registeredAt(), now.registeredAt())) {
      parts.add("registered anew at " + now.registeredAt());
    }
    return parts.isEmpty() ? "value rewritten" : String.join(", ", parts);
  }

  private void remember(InstanceKey key) {
    departed.add(key);
    if (departed.size() > REMEMBERED) {
      departed.remove(departed.iterator().next());
    }
  }

  private ConsoleEvent.Draft event(String type, Instance i, String detail) {
    return new ConsoleEvent.Draft(type, namespace, service, i.version(), i.id(), detail);
  }

  private ConsoleEvent.Draft serviceEvent(String type, String detail) {
    return new ConsoleEvent.Draft(type, namespace, service, "", "", detail);
  }
}
