package dev.muster.cli;

import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.muster.registry.Registration;
import java.io.PrintWriter;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import sun.misc.Signal;

/**
 * {@code muster register --start-not-ready}: SIGUSR1 puts the registration UP ({@link Registration#ready()}) and
 * prints {@code {"event":"ready","by":"SIGUSR1"}}; SIGUSR2 takes it out of rotation again, on the same lease
 * ({@link Registration#notReady()}, {@code {"event":"not_ready","by":"SIGUSR2"}}). A failed put prints {@code
 * ready_failed} with the reason. Uses {@code sun.misc.Signal} (module {@code jdk.unsupported}), the only signal API
 * the JDK has.
 *
 * <p>The handlers are installed before the registration starts, since its {@code registered} line is printed before
 * {@code register()} returns and a script may signal as soon as it reads it (SIGUSR1's default action ends the
 * process): a signal that comes first is kept and acted on, in order, once the registration exists.
 *
 * <p>Threading: the JDK runs signal handlers on a thread of its own; the command's thread hands the registration
 * over once. Both go through this object's monitor, which no I/O holds (each put is asynchronous; its line is printed
 * when etcd has it).
 */
final class ReadySignals {
  private final PrintWriter out;
  private final List<Runnable> early = new ArrayList<>();
  private Registration registration;

  private ReadySignals(PrintWriter out) {
    this.out = out;
  }

  /** Installs the SIGUSR1 and SIGUSR2 handlers; hand it the registration once it exists ({@link #registered}). */
  static ReadySignals install(PrintWriter out) {
    ReadySignals signals = new ReadySignals(out);
    Signal.handle(new Signal("USR1"), s -> signals.on(true));
    Signal.handle(new Signal("USR2"), s -> signals.on(false));
    return signals;
  }

  /** The registration the signals act on; the signals that came before it are acted on now, in order. */
  synchronized void registered(Registration r) {
    registration = r;
    early.forEach(Runnable::run);
    early.clear();
  }

  synchronized void on(boolean ready) { // package-private for the test
    Runnable act = () -> report(ready ? registration.ready() : registration.notReady(), ready ? "ready" : "not_ready",
        ready ? "SIGUSR1" : "SIGUSR2");
    if (registration == null) {
      early.add(act);
    } else {
      act.run();
    }
  }

  private void report(CompletableFuture<?> put, String event, String by) {
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
