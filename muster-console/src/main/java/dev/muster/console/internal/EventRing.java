package dev.muster.console.internal;

import java.time.Clock;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.List;

/**
 * The last {@code capacity} console events, numbered in the order they were added.
 *
 * <p>Thread-safe: caches' notifiers and the directory thread add, the pump thread reads; one monitor guards
 * the deque and the counter, held only to copy (never across I/O or a callback).
 */
final class EventRing {
  private final int capacity;
  private final Clock clock;
  private final ArrayDeque<ConsoleEvent> events = new ArrayDeque<>(); // guarded by this
  private long seq; // guarded by this

  EventRing(int capacity, Clock clock) {
    this.capacity = capacity;
    this.clock = clock;
  }

  synchronized void add(ConsoleEvent.Draft d) {
    events.addLast(new ConsoleEvent(++seq, clock.instant(), d.type(), d.namespace(), d.service(), d.version(),
        d.id(), d.detail()));
    while (events.size() > capacity) {
      events.removeFirst();
    }
  }

  void addAll(List<ConsoleEvent.Draft> drafts) {
    drafts.forEach(this::add);
  }

  /** The events numbered above {@code seq}, oldest first (those still kept). */
  synchronized List<ConsoleEvent> after(long seq) {
    List<ConsoleEvent> out = new ArrayList<>();
    for (ConsoleEvent e : events) {
      if (e.seq() > seq) {
        out.add(e);
      }
    }
    return out;
  }

  synchronized long lastSeq() {
    return seq;
  }
}
