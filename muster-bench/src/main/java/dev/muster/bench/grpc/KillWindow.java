package dev.muster.bench.grpc;

import dev.muster.bench.support.Plan;
import dev.muster.bench.support.SideResult;
import dev.muster.bench.support.Wait;
import dev.muster.grpc.MusterNameResolverProvider;
import dev.muster.grpc.MusterRetryInterceptor;
import dev.muster.retry.RetryConfig;
import dev.muster.testing.ChildProcess;
import io.grpc.Channel;
import io.grpc.ManagedChannel;
import io.grpc.StatusRuntimeException;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.LongAdder;

/**
 * The kill -9 part of {@link GrpcBench}: both callers run through every round on the same three providers, so
 * each kill falls on both policies alike. Only the calls started inside a window are counted.
 *
 * <p>Runs on the calling thread; each caller has its own thread and counts with adders, read after it stops.
 */
final class KillWindow {
  private static final String SERVICE = "bench-grpc-kill";

  private KillWindow() {}

  /** One caller: SAY every {@link GrpcBench#CALL_INTERVAL}, counted while {@link #counting} is set. */
  private static final class Caller implements Runnable {
    final Channel channel;
    final AtomicBoolean running = new AtomicBoolean(true);
    volatile boolean counting;
    final LongAdder calls = new LongAdder();
    final LongAdder failed = new LongAdder();
    final Set<String> servedBy = ConcurrentHashMap.newKeySet();
    volatile String lastFailure;

    Caller(Channel channel) {
      this.channel = channel;
    }

    @Override
    public void run() {
      long next = System.nanoTime();
      while (running.get()) {
        boolean counted = counting;
        try {
          servedBy.add(GrpcBench.say(channel));
          if (counted) {
            calls.increment();
          }
        } catch (StatusRuntimeException e) {
          if (counted) {
            calls.increment();
            failed.increment();
            lastFailure = e.getStatus().getCode() + " " + e.getStatus().getDescription()
                + (e.getCause() == null ? "" : " (" + e.getCause() + ")");
          }
        }
        next += GrpcBench.CALL_INTERVAL.toNanos();
        long wait = next - System.nanoTime();
        if (wait > 0) {
          Wait.sleep(Duration.ofNanos(wait));
        } else {
          next = System.nanoTime(); // a slow call: the next one starts now, without a burst to catch up
        }
      }
    }
  }

  static void run(Plan plan, Path dir, String endpoints, MusterNameResolverProvider resolver,
      GrpcBench.Result result) {
    List<ChildProcess> providers = new ArrayList<>();
    List<ManagedChannel> channels = new ArrayList<>();
    List<Thread> threads = new ArrayList<>();
    List<Caller> callers = new ArrayList<>();
    try {
      for (int i = 0; i < Plan.CALL_PROVIDERS; i++) {
        providers.add(GrpcBench.startProvider(dir, endpoints, SERVICE, "p" + i, plan));
      }
      providers.forEach(GrpcBench::awaitStarted);
      MusterRetryInterceptor retry = MusterRetryInterceptor.create(RetryConfig.defaults());
      for (Channel c : GrpcBench.killChannels(resolver, SERVICE, channels, retry)) {
        Caller caller = new Caller(c);
        callers.add(caller);
        Thread t = new Thread(caller, "grpc-bench-caller-" + callers.size());
        t.setDaemon(true);
        threads.add(t);
        t.start();
      }
      int next = Plan.CALL_PROVIDERS;
      for (int round = 0; round < plan.callRounds(); round++) {
        List<String> live = providers.stream().filter(ChildProcess::isAlive)
            .map(p -> p.name().substring("grpc-provider-".length())).toList();
        Wait.until("both callers to reach " + live, Duration.ofSeconds(30),
            () -> callers.stream().allMatch(c -> c.servedBy.containsAll(live)));
        ChildProcess victim = providers.stream().filter(ChildProcess::isAlive).findFirst().orElseThrow();
        callers.forEach(c -> c.counting = true);
        victim.kill();
        Wait.sleep(plan.callWindow());
        callers.forEach(c -> c.counting = false);
        providers.add(GrpcBench.startProvider(dir, endpoints, SERVICE, "p" + next++, plan));
        GrpcBench.awaitStarted(providers.get(providers.size() - 1));
        callers.forEach(c -> c.servedBy.clear());
      }
      callers.forEach(c -> c.running.set(false));
      for (Thread t : threads) {
        t.join(10_000);
      }
      record(result.muster(), callers.get(0));
      record(result.roundRobin(), callers.get(1));
      result.muster().value(GrpcBench.KILL_RETRIES, retry.retries());
      result.muster().note("kill -9: muster policy + MusterRetryInterceptor (RetryConfig.defaults()) vs round_robin"
          + " under outlier_detection_experimental (failure percentage 50 % over >= 5 requests, 1 s interval);"
          + " both callers on the same 3 providers, calls every " + GrpcBench.CALL_INTERVAL.toMillis()
          + " ms with a " + GrpcBench.CALL_DEADLINE.toMillis() + " ms deadline, counted for TTL + 2 s after each"
          + " kill; " + retry.retries() + " retries by the interceptor");
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IllegalStateException("interrupted", e);
    } finally {
      callers.forEach(c -> c.running.set(false));
      channels.forEach(ManagedChannel::shutdownNow);
      providers.forEach(ChildProcess::kill);
    }
  }

  private static void record(SideResult side, Caller caller) {
    side.value(GrpcBench.KILL_CALLS, caller.calls.sum());
    side.value(GrpcBench.KILL_FAILED, caller.failed.sum());
    if (caller.lastFailure != null) {
      side.note("last failed call: " + caller.lastFailure);
    }
  }
}
