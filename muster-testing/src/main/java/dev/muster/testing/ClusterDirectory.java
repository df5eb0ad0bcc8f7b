package dev.muster.testing;

import dev.muster.testing.internal.FreePorts;
import dev.muster.testing.internal.ProcessReaper;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Properties;

/**
 * Where an {@link EtcdCluster} keeps its members' data and logs, and which ports they listen on. Either a temporary
 * directory, removed when the cluster closes, or the user's {@code dataDir} ({@link EtcdCluster.Builder#dataDir}),
 * kept, which also remembers the cluster's ports ({@value #PORTS_FILE}) so that the same cluster starts again on
 * them: its peer URLs are stored in its data.
 *
 * <p>Not thread-safe: the cluster calls it under its own lock.
 */
final class ClusterDirectory {
  private static final String PORTS_FILE = "muster-etcd.properties";

  private final Path path;
  /** A temporary directory of ours (removed on close), not the user's data directory. */
  private final boolean owned;

  private ClusterDirectory(Path path, boolean owned) {
    this.path = path;
    this.owned = owned;
  }

  /** The user's {@code dataDir}, created if missing; or, when it is null, a new temporary directory. */
  static ClusterDirectory prepare(Path dataDir) {
    try {
      if (dataDir != null) {
        return new ClusterDirectory(Files.createDirectories(dataDir.toAbsolutePath()), false);
      }
      Path temp = Files.createTempDirectory("muster-etcd-");
      ProcessReaper.trackTempDir(temp);
      return new ClusterDirectory(temp, true);
    } catch (IOException e) {
      throw new EtcdLaunchException("cannot create etcd data directory " + dataDir + ": " + e.getMessage(), e);
    }
  }

  Path path() {
    return path;
  }

  boolean owned() {
    return owned;
  }

  /** Removes the directory if it is a temporary one of ours. */
  void removeIfOwned() {
    if (owned) {
      ProcessReaper.deleted(path);
    }
  }

  /** Whether a kept directory remembers ports from an earlier start. */
  boolean hasSavedPorts() {
    return !owned && Files.exists(portsFile());
  }

  /**
   * Ports as {client0, peer0, client1, peer1, ...}: the saved ones, or a fixed layout from {@code clientPort}
   * (member {@code i} on {@code clientPort + 10i} and one more), or free ones ({@code clientPort} 0).
   */
  int[] ports(int members, int clientPort) {
    int[] saved = loadPorts(members, clientPort);
    if (saved != null) {
      return saved;
    }
    int[] ports = new int[2 * members];
    for (int i = 0; i < members; i++) {
      if (clientPort > 0) {
        ports[2 * i] = clientPort + 10 * i;
        ports[2 * i + 1] = clientPort + 10 * i + 1;
        for (int p : new int[] {ports[2 * i], ports[2 * i + 1]}) {
          if (!FreePorts.isFree(p)) {
            throw new EtcdLaunchException("port " + p + " on 127.0.0.1 is in use (another etcd?): stop it, or"
                + " choose other ports (client port 0 picks free ones)");
          }
        }
      } else {
        ports[2 * i] = FreePorts.pick();
        ports[2 * i + 1] = FreePorts.pick();
      }
    }
    return ports;
  }

  /** Remembers {@code ports} for the next start (a kept directory only). */
  void savePorts(int[] ports, int members) {
    Properties p = new Properties();
    p.setProperty("members", Integer.toString(members));
    for (int i = 0; i < members; i++) {
      p.setProperty("m" + i + ".client", Integer.toString(ports[2 * i]));
      p.setProperty("m" + i + ".peer", Integer.toString(ports[2 * i + 1]));
    }
    try (OutputStream out = Files.newOutputStream(portsFile())) {
      p.store(out, "ports of the etcd cluster in this directory; peer URLs are stored in its data");
    } catch (IOException e) {
      throw new UncheckedIOException("cannot write " + portsFile() + ": " + e.getMessage(), e);
    }
  }

  private Path portsFile() {
    return path.resolve(PORTS_FILE);
  }

  private int[] loadPorts(int members, int clientPort) {
    if (owned || !Files.exists(portsFile())) {
      return null;
    }
    Properties p = new Properties();
    try (InputStream in = Files.newInputStream(portsFile())) {
      p.load(in);
    } catch (IOException e) {
      throw new UncheckedIOException("cannot read " + portsFile() + ": " + e.getMessage(), e);
    }
    int saved = Integer.parseInt(p.getProperty("members", "0"));
    if (saved != members) {
      throw new EtcdLaunchException(path + " holds a " + saved + "-member cluster: start it with " + saved
          + " members, or choose another data directory");
    }
    int[] ports = new int[2 * saved];
    for (int i = 0; i < saved; i++) {
      ports[2 * i] = Integer.parseInt(p.getProperty("m" + i + ".client"));
      ports[2 * i + 1] = Integer.parseInt(p.getProperty("m" + i + ".peer"));
    }
    if (clientPort > 0 && clientPort != ports[0]) {
      throw new EtcdLaunchException(path + " was created with client port " + ports[0] + ", not "
          + clientPort + ": use that port, or choose another data directory");
    }
    return ports;
  }
}
