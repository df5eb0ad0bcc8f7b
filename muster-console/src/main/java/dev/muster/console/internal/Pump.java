package dev.muster.console.internal;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.muster.cache.EndpointCache;
import dev.muster.cache.EndpointSet;
import java.time.Clock;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Computes each page's JSON from the caches, the event ring and the etcd reader, and queues it to every stream
 * showing that page when it differs from what that stream got last. A pass runs every second (the stale banner
 * counts seconds, TTLs count down) and at once when a cache or the directory {@linkplain #wake() wakes} it.
 *
 * <p>Threading: every pass runs on the one pump thread (wake coalesces requests into one queued pass); the set of
 * streams is concurrent (HTTP threads add, the pump removes closed ones). Reading a cache is a volatile read; no
 * lock is taken, no I/O is done here (the etcd reader does its I/O on its own thread).
 */
final class Pump {
  private static final Logger log = LoggerFactory.getLogger(Pump.class);

  private final ConsoleServices directory;
  private final EventRing ring;
  private final EtcdReader reader;
  private final long quota;
  private final boolean showLeases;
  private final Clock clock;
  private final ScheduledExecutorService thread;
  private final Set<StreamClient> clients = ConcurrentHashMap.newKeySet();
  private final AtomicBoolean queued = new AtomicBoolean();

  Pump(ConsoleServices directory, EventRing ring, EtcdReader reader, long quota, boolean showLeases, Clock clock,
      ScheduledExecutorService thread) {
    this.showLeases = showLeases;
    this.directory = directory;
    this.ring = ring;
    this.reader = reader;
    this.quota = quota;
    this.clock = clock;
    this.thread = thread;
  }

  /** The services the console watches now. */
  Collection<ConsoleServices.Watched> services() {
    return directory.services();
  }

  void start() {
    thread.scheduleWithFixedDelay(this::pass, 0, 1, TimeUnit.SECONDS);
  }

  void wake() {
    if (queued.compareAndSet(false, true)) {
      try {
        thread.execute(this::pass);
      } catch (java.util.concurrent.RejectedExecutionException e) {
        queued.set(false); // closing
      }
    }
  }

  int clients() {
    return clients.size();
  }

  void add(StreamClient c) {
    clients.add(c);
    wake();
  }

  void remove(StreamClient c) {
    c.close();
    clients.remove(c);
  }

  /** Ends every stream (closing). */
  void closeAll() {
    clients.forEach(this::remove);
  }

  private void pass() {
    queued.set(false);
    try {
      Instant now = clock.instant();
      ObjectNode banner = banner(now);
      Map<String, JsonNode> pages = new HashMap<>();
      Set<String> viewed = new HashSet<>();
      boolean cluster = false;
      List<ConsoleEvent> newest = null;
      for (StreamClient c : clients) {
        if (c.isClosed()) {
          clients.remove(c);
          continue;
        }
        StreamClient.View v = c.view();
        if (v.page().equals("service")) {
          viewed.add(v.namespace() + "/" + v.service());
        }
        cluster |= v.page().equals("cluster");
        ObjectNode state = Views.JSON.createObjectNode();
        state.put("page", v.page());
        state.set("banner", banner);
        state.set("data", pages.computeIfAbsent(v.key(), k -> page(v, now)));
        String s = state.toString();
        if (!s.equals(c.lastState)) {
          c.lastState = s;
          c.offer("state", s);
        }
        if (v.page().equals("events")) {
          if (newest == null) {
            newest = ring.after(0);
          }
          List<ConsoleEvent> fresh = new ArrayList<>();
          for (ConsoleEvent e : newest) {
            if (e.seq() > c.lastSeq) {
              fresh.add(e);
            }
          }
          if (!fresh.isEmpty()) {
            c.lastSeq = fresh.get(fresh.size() - 1).seq();
            c.offer("events", Views.events(fresh).toString());
          }
        }
      }
      reader.viewing(viewed, cluster);
    } catch (RuntimeException e) {
      log.error("a console pass failed (the next one retries)", e);
    }
  }

  private ObjectNode banner(Instant now) {
    Instant since = directory.listingFailedSince();
    String reason = since == null ? null : "cannot read the registry's services: " + directory.listingProblem();
    int stale = 0;
    for (ConsoleServices.Watched w : directory.services()) {
      Instant s = w.cache().staleSince().orElse(null);
      if (s == null && w.cache().isStale()) {
        s = now;
      }
      if (s != null) {
        stale++;
        if (since == null || s.isBefore(since)) {
          since = s;
        }
      }
    }
    if (reason == null && stale > 0) {
      reason = stale + " service cache(s) cannot reach etcd";
    }
    return Views.banner(since, reason, now);
  }

  private JsonNode page(StreamClient.View v, Instant now) {
    switch (v.page()) {
      case "overview": {
        List<Views.ServiceSummary> services = new ArrayList<>();
        for (ConsoleServices.Watched w : directory.services()) {
          services.add(new Views.ServiceSummary(w.namespace(), w.service(), w.cache().current(),
              w.cache().isStale()));
        }
        services.sort(java.util.Comparator.comparing(Views.ServiceSummary::namespace)
            .thenComparing(Views.ServiceSummary::service));
        return Views.overview(List.copyOf(directory.namespaces()), services);
      }
      case "service": {
        ConsoleServices.Watched w = directory.service(v.namespace(), v.service());
        EndpointCache cache = w == null ? null : w.cache();
        return Views.service(v.namespace(), v.service(), cache == null ? EndpointSet.EMPTY : cache.current(),
            cache != null, reader.leases(v.namespace(), v.service()).orElse(null), showLeases, now);
      }
      case "cluster":
        return Views.cluster(reader.cluster().orElse(null), quota);
      default:
        return Views.JSON.nullNode();
    }
  }
}
