package dev.muster.xds;

import dev.muster.metrics.MusterMeters;
import io.micrometer.core.instrument.FunctionCounter;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.Meter;
import io.micrometer.core.instrument.MeterRegistry;
import java.util.ArrayList;
import java.util.List;
import java.util.function.ToDoubleFunction;

/**
 * {@link XdsServer#bindMeters}'s meters. Every use of Micrometer is here, not in {@link XdsServer}: Micrometer is an
 * optional dependency, and a server class holding this code would not load without it ({@code muster xds} runs
 * without Micrometer on its class path). Loaded only when meters are bound.
 */
final class XdsMeters {
  private XdsMeters() {}

  static MusterMeters.Binding bind(MeterRegistry registry, XdsServer server) {
    List<Meter> meters = new ArrayList<>();
    meters.add(gauge(registry, "muster.xds.streams", server, XdsServer::streams, "ADS streams open"));
    meters.add(gauge(registry, "muster.xds.services", server, XdsServer::openServices,
        "services whose cache is open because a stream asks for their assignment"));
    meters.add(counter(registry, "muster.xds.responses", server, XdsServer::responses, "responses sent"));
    meters.add(counter(registry, "muster.xds.acks", server, XdsServer::acks, "responses clients accepted"));
    meters.add(counter(registry, "muster.xds.nacks", server, XdsServer::nacks,
        "responses clients refused (each logged with the client's reason, never sent again)"));
    meters.add(counter(registry, "muster.xds.bytes.sent", server, XdsServer::bytesSent, "bytes of responses sent"));
    meters.add(counter(registry, "muster.xds.streams.refused", server, XdsServer::refusedStreams,
        "streams refused or ended at a limit (--max-streams, --max-names, --max-services)"));
    meters.add(gauge(registry, "muster.xds.push.ack.p99.seconds", server,
        s -> s.pushLatency().p99().toNanos() / 1e9,
        "99th percentile, over the last acknowledgements, of a change's time from the server's cache to a client's"
            + " ACK"));
    return MusterMeters.of(registry, meters);
  }

  private static Meter gauge(MeterRegistry registry, String name, XdsServer server, ToDoubleFunction<XdsServer> f,
      String description) {
    return Gauge.builder(name, server, f).description(description).strongReference(true).register(registry);
  }

  private static Meter counter(MeterRegistry registry, String name, XdsServer server,
      ToDoubleFunction<XdsServer> f, String description) {
    return FunctionCounter.builder(name, server, f).description(description).register(registry);
  }
}
