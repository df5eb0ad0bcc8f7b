package dev.muster.registry.internal;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.muster.registry.Instance;
import dev.muster.registry.RegistrarConfig;
import dev.muster.registry.RegistrationEvent;
import dev.muster.registry.RegistrationState;
import dev.muster.registry.internal.RegistrarDriver.PutResult;
import java.security.SecureRandom;
import java.time.Clock;
import java.time.Duration;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * The registration's runtime over an in-memory registry, no etcd: which thread runs each step, and that the timers
 * reach the loop. The rules themselves are {@link RegistrarDriverTest}'s (fake clock); the runtime on etcd is
 * muster-etcd's {@code RegistrarIT}'s.
 */
@Timeout(30)
class LiveRegistrationTest {
  private final MemoryRegistry registry = new MemoryRegistry();
  private final ScheduledThreadPoolExecutor timers = LiveRegistration.newTimers();
  private final List<RegistrationEvent.Type> events = new CopyOnWriteArrayList<>();

  @AfterEach
  void stopTimers() {
    timers.shutdownNow();
  }

  private LiveRegistration register(RegistrarConfig config) {
    return LiveRegistration.register("/muster/default/orders/a", "memory", Instance.of("orders", "10.0.0.7", 8080)
        .id("a"), config, RegistrarControls.PRODUCTION, registry, timers, e -> events.add(e.type()),
        Clock.systemUTC(), System::nanoTime, new SecureRandom());
  }

  @Test
  void registerAndCloseRunTheirStepsOnTheCallersThreadWhenTheLoopIsIdle() {
    String caller = Thread.currentThread().getName();
    LiveRegistration r = register(RegistrarConfig.builder().drain(Duration.ZERO).shutdownHook(false).build());

    assertThat(r.state()).isEqualTo(RegistrationState.ACTIVE);
    assertThat(r.key()).isEqualTo("/muster/default/orders/a");
    assertThat(registry.calls).containsExactly("grant on " + caller, "putIfAbsent on " + caller);

    r.close();

    assertThat(r.whenClosed()).isDone();
    assertThat(r.leftBehind()).isEmpty();
    assertThat(registry.calls).last().isEqualTo("revoke on " + caller);
    assertThat(events).startsWith(RegistrationEvent.Type.REGISTERED).endsWith(RegistrationEvent.Type.REVOKED);
  }

  @Test
  void keepalivesAreHandedFromTheTimerThreadToTheLoopOnTheRegistrationsPool() {
    LiveRegistration r = register(RegistrarConfig.builder().ttl(Duration.ofSeconds(2))
        .keepaliveInterval(Duration.ofMillis(100)).requestTimeout(Duration.ofMillis(100)).drain(Duration.ZERO)
        .shutdownHook(false).build());

    await().atMost(Duration.ofSeconds(10)).until(() -> registry.calls.stream().filter(c -> c.startsWith("keepAlive"))
        .count() >= 2);
    r.close();

    assertThat(registry.calls.stream().filter(c -> c.startsWith("keepAlive")))
        .allMatch(c -> c.startsWith("keepAlive on muster-registrar-"));
    assertThat(registry.calls).last().asString().startsWith("revoke");
  }

  @Test
  void updateQueuesOnTheLoopAndClosedRegistrationsRefuseIt() throws Exception {
    LiveRegistration r = register(RegistrarConfig.builder().drain(Duration.ZERO).shutdownHook(false).build());

    assertThat(r.update(i -> i.weight(7)).get().weight()).isEqualTo(7);
    r.close();

    assertThat(r.update(i -> i.weight(8))).isCompletedExceptionally();
  }

  /** A registry of leases and one key that answers at once, naming the thread of each call. Thread-safe. */
  private static final class MemoryRegistry implements RegistrarDriver.Io {
    final List<String> calls = new CopyOnWriteArrayList<>();
    private long lease;
    private long revision = 100;

    private void call(String what) {
      calls.add(what + " on " + Thread.currentThread().getName());
    }

    @Override
    public synchronized long grant(Duration ttl) {
      call("grant");
      return ++lease;
    }

    @Override
    public synchronized PutResult putIfAbsent(Instance instance, long lease) {
      call("putIfAbsent");
      return new PutResult(true, ++revision, lease);
    }

    @Override
    public synchronized long put(Instance instance, long lease) {
      call("put");
      return ++revision;
    }

    @Override
    public long keepAlive(long lease) {
      call("keepAlive");
      return 2;
    }

    @Override
    public synchronized long revoke(long lease) {
      call("revoke");
      return ++revision;
    }

    @Override
    public Optional<Duration> remaining(long lease) {
      return Optional.of(Duration.ofSeconds(2));
    }

    @Override
    public void connectionFailed() {
      call("connectionFailed");
    }
  }
}
