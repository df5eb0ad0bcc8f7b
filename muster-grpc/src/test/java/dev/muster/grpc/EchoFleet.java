package dev.muster.grpc;

import dev.muster.etcd.EtcdRegistry;
import dev.muster.grpc.echo.Echo;
import dev.muster.registry.Instance;
import dev.muster.registry.RegistrarConfig;
import dev.muster.registry.Registration;
import io.grpc.ForwardingServerCall;
import io.grpc.ForwardingServerCallListener;
import io.grpc.Metadata;
import io.grpc.Server;
import io.grpc.ServerCall;
import io.grpc.ServerCallHandler;
import io.grpc.ServerInterceptor;
import io.grpc.ServerInterceptors;
import io.grpc.Status;
import io.grpc.netty.NettyServerBuilder;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.InetSocketAddress;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;

/** In-JVM Netty echo servers on loopback, each registered in etcd; {@link #close()} stops every one it started. */
final class EchoFleet implements AutoCloseable {
  private final EtcdRegistry registry;
  private final String service;
  private final List<Server> servers = new ArrayList<>();
  private final List<AtomicInteger> inFlight = new ArrayList<>();
  private final List<AtomicBoolean> holds = new ArrayList<>();
  private final List<Registration> registrations = new ArrayList<>();

  EchoFleet(EtcdRegistry registry, String service) {
    this.registry = registry;
    this.service = service;
  }

  /** A started server answering as {@code id}, registered with {@code weight}; returns its registration. */
  Registration start(String id, int weight) {
    return start(id, weight, Duration.ofMillis(500));
  }

  /** As {@link #start(String, int)}, staying {@code DRAINING} for {@code drain} when its registration closes. */
  Registration start(String id, int weight, Duration drain) {
    Server server;
    AtomicInteger calls = new AtomicInteger();
    AtomicBoolean hold = new AtomicBoolean();
    try {
      server = NettyServerBuilder.forAddress(new InetSocketAddress("127.0.0.1", 0))
          .addService(ServerInterceptors.intercept(Echo.service(id), counting(calls, hold))).build().start();
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
    servers.add(server);
    inFlight.add(calls);
    holds.add(hold);
    Registration r = registry.register(Instance.of(service, "127.0.0.1", server.getPort()).id(id).weight(weight),
        RegistrarConfig.builder().drain(drain).shutdownHook(false).build());
    registrations.add(r);
    return r;
  }

  /** The server started {@code index}-th, for a test to kill. */
  Server server(int index) {
    return servers.get(index);
  }

  /** How many calls the server started {@code index}-th has started and not yet answered. */
  int inFlight(int index) {
    return inFlight.get(index).get();
  }

  /**
   * From now on the server started {@code index}-th withholds every answer: its calls stay in flight until it is
   * shut down, so a test's {@code shutdownNow()} certainly cuts the ones it has (a loaded machine once let the one
   * call a test saw in flight finish between the check and the kill).
   */
  void holdAnswers(int index) {
    holds.get(index).set(true);
  }

  /**
   * Counts a call from its start until the server sends its status or it is cancelled, whichever is first; while
   * {@code hold} is set, the status is never sent (the call stays in flight).
   */
  private static ServerInterceptor counting(AtomicInteger calls, AtomicBoolean hold) {
    return new ServerInterceptor() {
      @Override
      public <Q, R> ServerCall.Listener<Q> interceptCall(ServerCall<Q, R> call, Metadata headers,
          ServerCallHandler<Q, R> next) {
        calls.incrementAndGet();
        AtomicBoolean ended = new AtomicBoolean();
        Runnable end = () -> {
          if (ended.compareAndSet(false, true)) {
            calls.decrementAndGet();
          }
        };
        ServerCall<Q, R> counted = new ForwardingServerCall.SimpleForwardingServerCall<>(call) {
          @Override
          public void close(Status status, Metadata trailers) {
            if (hold.get()) {
              return; // withheld: in flight until the server is shut down (onCancel ends it)
            }
            end.run();
            super.close(status, trailers);
          }
        };
        return new ForwardingServerCallListener.SimpleForwardingServerCallListener<>(next.startCall(counted,
            headers)) {
          @Override
          public void onCancel() {
            end.run();
            super.onCancel();
          }
        };
      }
    };
  }

  @Override
  public void close() {
    for (Registration r : registrations) {
      r.closeAsync();
    }
    for (Server s : servers) {
      s.shutdownNow();
    }
    for (Server s : servers) {
      try {
        s.awaitTermination(5, TimeUnit.SECONDS);
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        return;
      }
    }
    for (Registration r : registrations) {
      r.closeAsync().orTimeout(10, TimeUnit.SECONDS).exceptionally(t -> null).join();
    }
  }
}
