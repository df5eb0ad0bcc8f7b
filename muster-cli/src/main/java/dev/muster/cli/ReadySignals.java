package dev.muster.cli;

import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.muster.registry.Registration;
import java.io.PrintWriter;
import java.time.Instant;
import java.util.concurrent.CompletableFuture;
import sun.misc.Signal;

/**
 * {@code muster register --start-not-ready}: SIGUSR1 puts the registration UP ({@link Registration#ready()}) and
 * prints {@code {"event":"ready","by":"SIGUSR1"}}; SIGUSR2 takes it out of rotation again, on the same lease
 * ({@link Registration#notReady()}, {@code {"event":"not_ready","by":"SIGUSR2"}}). The JDK runs signal handlers on
 * a thread of its own; the put is asynchronous and its line is printed when etcd has it. A failed put prints
 * {@code ready_failed} with the reason. Uses {@code sun.misc.Signal} (module {@code jdk.unsupported}), the only
 * signal API the JDK has.
 */
final class ReadySignals {
  private ReadySignals() {}

  static void install(Registration registration, PrintWriter out) {
    Signal.handle(new Signal("USR1"), s -> report(registration.ready(), "ready", "SIGUSR1", out));
    Signal.handle(new Signal("USR2"), s -> report(registration.notReady(), "not_ready", "SIGUSR2", out));
  }

  private static void report(CompletableFuture<?> put, String event, String by, PrintWriter out) {
    put.whenComplete((r, e) -> {
      ObjectNode node = JsonLines.event(e == null ? event : "ready_failed", Instant.now());
      node.put("by", by);
      if (e != null) {
        node.put("detail", e.getMessage());
      }
      JsonLines.print(out, node);
    });
  }
}
