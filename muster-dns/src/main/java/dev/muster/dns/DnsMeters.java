package dev.muster.dns;

import dev.muster.dns.internal.DnsCounters;
import dev.muster.metrics.MusterMeters;
import io.micrometer.core.instrument.FunctionCounter;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.Meter;
import io.micrometer.core.instrument.MeterRegistry;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.LongAdder;
import java.util.function.LongSupplier;

/**
 * {@link DnsGateway#bindMeters}'s meters. Every use of Micrometer is here, not in {@link DnsGateway}: Micrometer is an
 * optional dependency, and the JVM's verifier loads the types a method's code assigns to one another (a {@code
 * FunctionCounter} returned as a {@code Meter}), so a gateway class holding this code would not load without it
 * ({@code muster dns} runs without Micrometer on its class path). Loaded only when meters are bound.
 */
final class DnsMeters {
  private DnsMeters() {}

  static MusterMeters.Binding bind(MeterRegistry registry, DnsCounters counters, LongSupplier rejectedRecords) {
    List<Meter> meters = new ArrayList<>();
    for (String type : DnsCounters.TYPES) {
      for (String result : DnsCounters.RESULTS) {
        meters.add(FunctionCounter.builder("muster.dns.queries", counters, c -> c.replies(type, result))
            .tags("type", type, "result", result).description("replies by question type and result")
            .register(registry));
      }
    }
    meters.add(counter(registry, "muster.dns.dropped", counters.dropped, "queries dropped (bad, or a response)"));
    meters.add(counter(registry, "muster.dns.rate.limited", counters.rateLimited, "queries over the rate limit"));
    meters.add(counter(registry, "muster.dns.truncated", counters.truncated, "UDP replies sent truncated (TC)"));
    meters.add(counter(registry, "muster.dns.tcp.refused", counters.tcpRefused, "TCP connections refused (full)"));
    meters.add(Gauge.builder("muster.dns.records.rejected", rejectedRecords, LongSupplier::getAsLong)
        .description("records the served services' caches excluded (unverified or malformed)").strongReference(true)
        .register(registry));
    return MusterMeters.of(registry, meters);
  }

  private static Meter counter(MeterRegistry registry, String name, LongAdder adder, String description) {
    return FunctionCounter.builder(name, adder, LongAdder::sum).description(description).register(registry);
  }
}
