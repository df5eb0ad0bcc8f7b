package dev.muster.console;

import dev.muster.console.internal.ConsoleCounters;
import dev.muster.console.internal.ConsoleRuntime;
import dev.muster.metrics.MusterMeters;
import io.micrometer.core.instrument.FunctionCounter;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.Meter;
import io.micrometer.core.instrument.MeterRegistry;
import java.util.ArrayList;
import java.util.List;

/**
 * {@link ConsoleServer#bindMeters}'s meters. Every use of Micrometer is here, not in {@link ConsoleServer}:
 * Micrometer is an optional dependency, and the JVM's verifier may load the types a method's code assigns to one
 * another, so the server class must not hold this code ({@code muster console} runs without Micrometer on its class
 * path). Loaded only when meters are bound.
 */
final class ConsoleMeters {
  private ConsoleMeters() {}

  static MusterMeters.Binding bind(MeterRegistry registry, ConsoleRuntime r) {
    List<Meter> meters = new ArrayList<>();
    for (String status : ConsoleCounters.STATUSES) {
      meters.add(FunctionCounter.builder("muster.console.answers", r, x -> x.counters().answers(status))
          .tag("status", status).description("HTTP answers by status, each counted when it ends (an event stream when it closes)").register(registry));
    }
    meters.add(FunctionCounter.builder("muster.console.drains", r, x -> x.counters().drains())
        .description("instances drained from the console").register(registry));
    meters.add(Gauge.builder("muster.console.streams", r, ConsoleRuntime::streams)
        .description("event streams open").strongReference(true).register(registry));
    meters.add(Gauge.builder("muster.console.services", r, ConsoleRuntime::services)
        .description("services watched").strongReference(true).register(registry));
    meters.add(Gauge.builder("muster.console.records.rejected", r, ConsoleRuntime::rejectedRecords)
        .description("records the watched services' caches excluded (unverified or malformed)")
        .strongReference(true).register(registry));
    return MusterMeters.of(registry, meters);
  }
}
