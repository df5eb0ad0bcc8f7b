package dev.muster.cli;

import dev.muster.grpc.MusterGrpcServer;
import io.grpc.ServerServiceDefinition;
import io.grpc.health.v1.HealthCheckResponse.ServingStatus;
import io.grpc.protobuf.services.HealthStatusManager;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;

/**
 * {@code muster grpc-serve --health-fault-file FILE}: a provider alive, serving calls and holding its lease, whose
 * gRPC health says NOT_SERVING while the file's first word is {@code NOT_SERVING} (a probe-failing provider, as
 * {@code HelloServer}'s {@code health-503} is for HTTP). Read every 100 ms on one daemon thread; health goes back to
 * SERVING when the word goes, unless the server is stopping (its own drain sets NOT_SERVING for good).
 */
final class HealthFault {
  private HealthFault() {}

  static void start(Path file, HealthStatusManager health, MusterGrpcServer server) {
    List<String> names = new ArrayList<>(List.of("", server.instance().service()));
    for (ServerServiceDefinition d : server.server().getServices()) {
      names.add(d.getServiceDescriptor().getName());
    }
    ScheduledExecutorService timer = Executors.newSingleThreadScheduledExecutor(r -> {
      Thread t = new Thread(r, "muster-health-fault");
      t.setDaemon(true);
      return t;
    });
    boolean[] failing = new boolean[1]; // the timer thread's
    timer.scheduleWithFixedDelay(() -> {
      if (server.state() != MusterGrpcServer.State.SERVING) {
        timer.shutdown(); // stopping: the server's health is its own from now on
        return;
      }
      boolean fail = "NOT_SERVING".equals(firstWord(file));
      if (fail != failing[0]) {
        failing[0] = fail;
        for (String name : names) {
          health.setStatus(name, fail ? ServingStatus.NOT_SERVING : ServingStatus.SERVING);
        }
      }
    }, 0, 100, TimeUnit.MILLISECONDS);
  }

  private static String firstWord(Path file) {
    try {
      String s = Files.readString(file, StandardCharsets.UTF_8).trim();
      int space = s.indexOf(' ');
      return space < 0 ? s : s.substring(0, space);
    } catch (NoSuchFileException e) {
      return "";
    } catch (IOException e) {
      return "";
    }
  }
}
