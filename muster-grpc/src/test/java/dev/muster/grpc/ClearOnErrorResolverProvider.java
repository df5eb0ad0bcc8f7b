package dev.muster.grpc;

import dev.muster.MusterException;
import dev.muster.etcd.EtcdRegistry;
import dev.muster.registry.Instance;
import io.grpc.EquivalentAddressGroup;
import io.grpc.NameResolver;
import io.grpc.NameResolverProvider;
import io.grpc.Status;
import java.net.InetSocketAddress;
import java.net.SocketAddress;
import java.net.URI;
import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;

/**
 * The negative control for stale-while-error (the lab's clear-on-error consumer, for gRPC): scheme {@code control},
 * a resolver that lists the registry every 300 ms and tells the channel {@code onError} whenever a listing fails,
 * as a plain polling resolver would. Test code only.
 */
final class ClearOnErrorResolverProvider extends NameResolverProvider {
  private final EtcdRegistry registry;

  ClearOnErrorResolverProvider(EtcdRegistry registry) {
    this.registry = registry;
  }

  @Override
  public String getDefaultScheme() {
    return "control";
  }

  @Override
  protected boolean isAvailable() {
    return true;
  }

  @Override
  protected int priority() {
    return 5;
  }

  @Override
  public Collection<Class<? extends SocketAddress>> getProducedSocketAddressTypes() {
    return List.of(InetSocketAddress.class);
  }

  @Override
  public NameResolver newNameResolver(URI target, NameResolver.Args args) {
    if (!"control".equals(target.getScheme())) {
      return null;
    }
    String service = target.getPath().substring(1);
    ScheduledExecutorService timer = args.getScheduledExecutorService();
    return new NameResolver() {
      private ScheduledFuture<?> poll;

      @Override
      public String getServiceAuthority() {
        return service;
      }

      @Override
      public void start(Listener2 listener) {
        // Polls on the channel's timer thread (a blocking list there is this control's own business), delivers in
        // the synchronization context.
        poll = timer.scheduleWithFixedDelay(() -> {
          try {
            List<EquivalentAddressGroup> groups = new ArrayList<>();
            for (Instance i : registry.list("default", service).instances()) {
              groups.add(new EquivalentAddressGroup(new InetSocketAddress(i.address(), i.port())));
            }
            args.getSynchronizationContext().execute(() -> listener.onResult2(
                ResolutionResult.newBuilder().setAddressesOrError(io.grpc.StatusOr.fromValue(groups)).build()));
          } catch (MusterException e) {
            args.getSynchronizationContext().execute(() ->
                listener.onError(Status.UNAVAILABLE.withDescription("control: " + e.getMessage())));
          }
        }, 0, 300, TimeUnit.MILLISECONDS);
      }

      @Override
      public void shutdown() {
        if (poll != null) {
          poll.cancel(false);
        }
      }
    };
  }
}
