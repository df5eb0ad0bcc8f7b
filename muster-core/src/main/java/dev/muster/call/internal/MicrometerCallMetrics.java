package dev.muster.call.internal;

import dev.muster.call.CallMetrics;
import dev.muster.outlier.Outcome;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.MeterRegistry;
import java.util.Objects;

/**
 * {@link CallMetrics} as Micrometer counters, each tagged {@code service}:
 * {@code muster.call.picks}, {@code muster.call.no.endpoint}, {@code muster.call.attempts},
 * {@code muster.call.failures} (tag {@code kind}: {@code local_origin} or {@code http_5xx}),
 * {@code muster.call.ejections}, {@code muster.call.retries} and {@code muster.call.budget.refusals}.
 *
 * <p>Thread-safe. The counters are registered once, in the constructor; each event is one counter increment.
 */
public final class MicrometerCallMetrics implements CallMetrics {
  private final Counter picks;
  private final Counter noEndpoint;
  private final Counter attempts;
  private final Counter localOriginFailures;
  private final Counter http5xxFailures;
  private final Counter ejections;
  private final Counter retries;
  private final Counter budgetRefusals;

  public MicrometerCallMetrics(MeterRegistry registry, String service) {
    Objects.requireNonNull(registry, "registry");
    Objects.requireNonNull(service, "service");
    picks = counter(registry, "muster.call.picks", service, "endpoints picked for attempts");
    noEndpoint = counter(registry, "muster.call.no.endpoint", service, "calls that found no endpoint");
    attempts = counter(registry, "muster.call.attempts", service, "attempts started, retries included");
    localOriginFailures = Counter.builder("muster.call.failures").tag("service", service).tag("kind", "local_origin")
        .description("failed attempts by kind").register(registry);
    http5xxFailures = Counter.builder("muster.call.failures").tag("service", service).tag("kind", "http_5xx")
        .description("failed attempts by kind").register(registry);
    ejections = counter(registry, "muster.call.ejections", service, "endpoints ejected by an attempt's outcome");
    retries = counter(registry, "muster.call.retries", service, "retries started");
    budgetRefusals = counter(registry, "muster.call.budget.refusals", service, "retries refused by the budget");
  }

  private static Counter counter(MeterRegistry registry, String name, String service, String description) {
    return Counter.builder(name).tag("service", service).description(description).register(registry);
  }

  @Override
  public void picked() {
    picks.increment();
  }

  @Override
  public void noEndpoint() {
    noEndpoint.increment();
  }

  @Override
  public void attempted() {
    attempts.increment();
  }

  @Override
  public void failed(Outcome kind) {
    (kind == Outcome.HTTP_5XX ? http5xxFailures : localOriginFailures).increment();
  }

  @Override
  public void ejected() {
    ejections.increment();
  }

  @Override
  public void retried() {
    retries.increment();
  }

  @Override
  public void budgetRefused() {
    budgetRefusals.increment();
  }
}
