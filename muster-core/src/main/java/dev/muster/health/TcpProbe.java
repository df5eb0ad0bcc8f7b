package dev.muster.health;

import dev.muster.registry.Instance;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.nio.channels.AsynchronousChannelGroup;
import java.nio.channels.AsynchronousSocketChannel;
import java.nio.channels.CompletionHandler;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;

/**
 * Opens a TCP connection to each endpoint and closes it at once: passes when the connection is accepted. Uses NIO's
 * asynchronous connect on a one-thread channel group of its own, so no thread waits for a connection; the
 * prober's timeout covers an endpoint that never answers (the channel is closed when the prober gives up, see
 * {@link Prober}). Thread-safe.
 */
final class TcpProbe implements Probe {
  private final ExecutorService groupThreads;
  private final AsynchronousChannelGroup group;

  TcpProbe() {
    this.groupThreads = Executors.newSingleThreadExecutor(r -> {
      Thread t = new Thread(r, "muster-probe-tcp");
      t.setDaemon(true);
      return t;
    });
    try {
      this.group = AsynchronousChannelGroup.withThreadPool(groupThreads);
    } catch (IOException e) {
      groupThreads.shutdownNow();
      throw new IllegalStateException("cannot open an NIO channel group for TCP probes: " + e.getMessage(), e);
    }
  }

  @Override
  public CompletableFuture<ProbeResult> check(Instance target, Duration timeout) {
    CompletableFuture<ProbeResult> result = new CompletableFuture<>();
    AsynchronousSocketChannel channel;
    try {
      channel = AsynchronousSocketChannel.open(group);
    } catch (IOException e) {
      return CompletableFuture.completedFuture(ProbeResult.fail("cannot open a socket: " + e.getMessage()));
    }
    result.whenComplete((r, e) -> close(channel)); // also when the prober times the probe out
    try {
      channel.connect(new InetSocketAddress(target.address(), target.port()), null,
          new CompletionHandler<Void, Void>() {
            @Override
            public void completed(Void v, Void a) {
              result.complete(ProbeResult.pass("connected"));
            }

            @Override
            public void failed(Throwable e, Void a) {
              result.complete(ProbeResult.fail(e instanceof java.net.ConnectException ? "connection refused"
                  : e.getClass().getSimpleName() + (e.getMessage() == null ? "" : ": " + e.getMessage())));
            }
          });
    } catch (RuntimeException e) {
      result.complete(ProbeResult.fail("cannot connect to " + target.address() + ":" + target.port() + ": " + e));
    }
    return result;
  }

  private static void close(AsynchronousSocketChannel channel) {
    try {
      channel.close();
    } catch (IOException ignored) {
      // closing a probe's socket: nothing to recover
    }
  }

  @Override
  public void close() {
    group.shutdown();
    groupThreads.shutdownNow();
  }
}
