package example;

import com.fasterxml.jackson.databind.JsonNode;
import dev.muster.etcd.EtcdConfig;
import dev.muster.etcd.EtcdRegistry;
import dev.muster.grpc.MusterGrpcServer;
import dev.muster.grpc.MusterNameResolverProvider;
import dev.muster.grpc.echo.Echo;
import io.grpc.CallOptions;
import io.grpc.Grpc;
import io.grpc.InsecureChannelCredentials;
import io.grpc.InsecureServerCredentials;
import io.grpc.ManagedChannel;
import io.grpc.NameResolverRegistry;
import io.grpc.stub.ClientCalls;
import java.util.concurrent.TimeUnit;

/**
 * A gRPC application built outside Muster's reactor: an Echo server registered as {@code echo} by
 * MusterGrpcServer, and a channel to {@code muster:///echo} that calls it. Prints who answered each call, one line
 * each. Usage: GrpcApp ETCD_ENDPOINTS CALLS
 */
public final class GrpcApp {
  public static void main(String[] args) throws Exception {
    int calls = Integer.parseInt(args[1]);
    try (EtcdRegistry registry = EtcdRegistry.connect(EtcdConfig.of(args[0]))) {
      MusterGrpcServer server = MusterGrpcServer.builder(registry,
              Grpc.newServerBuilderForPort(0, InsecureServerCredentials.create()).addService(Echo.service("g1")))
          .service("echo").address("127.0.0.1").id("g1").drain(java.time.Duration.ZERO).build().start();
      NameResolverRegistry.getDefaultRegistry().register(MusterNameResolverProvider.of(registry));
      ManagedChannel channel = Grpc.newChannelBuilder("muster:///echo", InsecureChannelCredentials.create())
          .build();
      try {
        for (int i = 0; i < calls; i++) {
          JsonNode reply = ClientCalls.blockingUnaryCall(channel, Echo.SAY,
              CallOptions.DEFAULT.withDeadlineAfter(10, TimeUnit.SECONDS).withWaitForReady(), Echo.say("hi", 0));
          System.out.println("served by " + reply.path("served_by").asText());
        }
      } finally {
        channel.shutdownNow().awaitTermination(5, TimeUnit.SECONDS);
        server.close();
      }
    }
  }
}
