package dev.muster.cli;

import static org.assertj.core.api.Assertions.assertThat;

import dev.muster.registry.Instance;
import dev.muster.registry.Registration;
import dev.muster.registry.RegistrationState;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.function.UnaryOperator;
import org.junit.jupiter.api.Test;

/**
 * A signal that comes before {@code register()} returns is acted on once the registration exists, in order. Found by
 * a clean-clone suite of ac606dc: {@code RegisterCommandIT} sent SIGUSR1 as soon as it read {@code registered},
 * before the handler was installed, and SIGUSR1's default action ended the provider (exit 138).
 */
class ReadySignalsTest {
  @Test
  void signalsBeforeTheRegistrationExistsAreActedOnInOrderOnceItDoes() {
    StringWriter lines = new StringWriter();
    ReadySignals signals = ReadySignals.install(new PrintWriter(lines, true));
    Recording r = new Recording();

    signals.on(true);
    signals.on(false);
    signals.on(true);
    assertThat(r.calls).isEmpty();

    signals.registered(r);
    assertThat(r.calls).containsExactly("ready", "notReady", "ready");
    signals.on(false);
    assertThat(r.calls).containsExactly("ready", "notReady", "ready", "notReady");
    assertThat(lines.toString()).contains("\"event\":\"ready\"", "\"by\":\"SIGUSR1\"", "\"event\":\"not_ready\"",
        "\"by\":\"SIGUSR2\"");
  }

  /** A registration that records what was asked of it. */
  private static final class Recording implements Registration {
    final List<String> calls = new ArrayList<>();

    @Override
    public CompletableFuture<Instance> ready() {
      calls.add("ready");
      return CompletableFuture.completedFuture(instance());
    }

    @Override
    public CompletableFuture<Instance> notReady() {
      calls.add("notReady");
      return CompletableFuture.completedFuture(instance());
    }

    @Override
    public Instance instance() {
      return Instance.of("orders", "10.0.0.7", 8080).id("a");
    }

    @Override
    public long leaseId() {
      return 1;
    }

    @Override
    public RegistrationState state() {
      return RegistrationState.ACTIVE;
    }

    @Override
    public CompletableFuture<Instance> update(UnaryOperator<Instance> change) {
      throw new UnsupportedOperationException();
    }

    @Override
    public CompletableFuture<Void> drain() {
      throw new UnsupportedOperationException();
    }

    @Override
    public CompletableFuture<Void> closeAsync() {
      throw new UnsupportedOperationException();
    }

    @Override
    public void close() {
    }
  }
}
