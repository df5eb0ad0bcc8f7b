package dev.muster.bench.xds;

import io.grpc.Grpc;
import io.grpc.InsecureChannelCredentials;
import io.grpc.ManagedChannel;
import java.util.ArrayList;
import java.util.List;

/**
 * One client JVM of the xds section: {@code COUNT} grpc-java channels to {@code xds:///SERVICE?c=PREFIX-I}, each its
 * own xDS client and so its own ADS stream (grpc-java keeps one xDS client per target; the query makes the targets
 * differ and the listener name stays SERVICE). The bootstrap is the system property {@code io.grpc.xds.bootstrapConfig},
 * given on the command line. Prints {@code ready COUNT} once every channel has asked for its resources, then waits
 * to be stopped (by pid, by the bench).
 *
 * <p>Usage: {@code XdsClientFleet SERVICE COUNT PREFIX}
 */
public final class XdsClientFleet {
  private XdsClientFleet() {}

  public static void main(String[] args) throws InterruptedException {
    String service = args[0];
    int count = Integer.parseInt(args[1]);
    String prefix = args[2];
    List<ManagedChannel> channels = new ArrayList<>(count);
    for (int i = 0; i < count; i++) {
      ManagedChannel c = Grpc.newChannelBuilder("xds:///" + service + "?c=" + prefix + "-" + i,
          InsecureChannelCredentials.create()).build();
      c.getState(true); // leaves idle: the resolver starts, and with it the target's xDS client and stream
      channels.add(c);
    }
    System.out.println("ready " + channels.size());
    System.out.flush();
    Thread.sleep(Long.MAX_VALUE);
  }
}
