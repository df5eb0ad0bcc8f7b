package dev.muster.cli;

import java.util.List;
import java.util.concurrent.CountDownLatch;

/**
 * A server command's stop: a shutdown hook (SIGTERM, Ctrl-C) that runs the given steps in order, and {@link #await()}
 * for the command's thread, which returns once they ran.
 */
final class StopOnSignal {
  private final CountDownLatch stopped = new CountDownLatch(1);

  private StopOnSignal() {}

  /** Installs the hook, on a thread named {@code threadName}. */
  static StopOnSignal install(String threadName, Runnable... steps) {
    StopOnSignal s = new StopOnSignal();
    List<Runnable> inOrder = List.of(steps);
    Runtime.getRuntime().addShutdownHook(new Thread(() -> {
      inOrder.forEach(Runnable::run);
      s.stopped.countDown();
    }, threadName));
    return s;
  }

  void await() throws InterruptedException {
    stopped.await();
  }
}
