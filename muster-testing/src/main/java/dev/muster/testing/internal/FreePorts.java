package dev.muster.testing.internal;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.nio.channels.FileChannel;
import java.nio.channels.FileLock;
import java.nio.channels.OverlappingFileLockException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.HashSet;
import java.util.Set;
import java.util.concurrent.ThreadLocalRandom;

/**
 * Picks loopback ports for the processes this JVM starts, so that test JVMs running side by side (the build's
 * parallel forks) never hand one port to two of them, and no outgoing connection takes a port an etcd member is
 * about to bind again.
 *
 * <ul>
 *   <li><b>Outside the kernel's ephemeral range</b> ({@code /proc/sys/net/ipv4/ip_local_port_range}, 32768–60999 on
 *       Linux): a member restarted on its old port finds it free, because client connections only ever take
 *       ephemeral ports as their source.</li>
 *   <li><b>Reserved across JVMs</b>: a picked port is locked, one byte at its offset in
 *       {@code ${java.io.tmpdir}/muster-ports.lock} (a POSIX record lock), until this JVM exits; another JVM's
 *       {@code tryLock} on it fails, so it picks another. The kernel drops the locks of a JVM that dies, however it
 *       dies. This JVM never picks a port twice.</li>
 * </ul>
 * A port that something else (not a Muster JVM) holds is skipped by a bind check. What is left is a race with
 * programs that bind fixed ports in this range; the launchers start a member again on new ports when it finds its
 * port taken.
 *
 * <p>Thread-safe: picks are serialized on the class.
 */
public final class FreePorts {
  /** Below Linux's default ephemeral range, above the ports services usually hold. */
  private static final int LOW = 20_000;
  private static final int ATTEMPTS = 2_000;
  private static final Path LOCK_FILE = Path.of(System.getProperty("java.io.tmpdir"), "muster-ports.lock");

  /** Ports this JVM holds (their locks live as long as the channel, which stays open until the JVM exits). */
  private static final Set<Integer> HELD = new HashSet<>();
  private static FileChannel channel;

  private FreePorts() {}

  /** A loopback port nothing listened on a moment ago, reserved for this JVM until it exits. */
  public static synchronized int pick() {
    int high = ephemeralStart();
    ThreadLocalRandom random = ThreadLocalRandom.current();
    for (int i = 0; i < ATTEMPTS; i++) {
      int port = LOW + random.nextInt(high - LOW);
      if (!HELD.contains(port) && reserve(port) && isFree(port)) {
        return port;
      }
    }
    throw new IllegalStateException("no free loopback port between " + LOW + " and " + high + " after " + ATTEMPTS
        + " tries: are that many ports held by other processes?");
  }

  /** True when nothing listens on {@code port} on 127.0.0.1 and we can bind it. */
  public static boolean isFree(int port) {
    try (ServerSocket s = new ServerSocket()) {
      s.setReuseAddress(true);
      s.bind(new InetSocketAddress(InetAddress.getLoopbackAddress(), port));
      return true;
    } catch (IOException e) {
      return false;
    }
  }

  /** Locks {@code port}'s byte of the shared lock file; false when another JVM holds it. */
  private static boolean reserve(int port) {
    try {
      if (channel == null) {
        channel = FileChannel.open(LOCK_FILE, StandardOpenOption.CREATE, StandardOpenOption.WRITE);
        LOCK_FILE.toFile().setWritable(true, false); // other users' JVMs reserve in the same file
      }
      FileLock lock = channel.tryLock(port, 1, false);
      if (lock == null) {
        return false;
      }
      HELD.add(port);
      return true;
    } catch (OverlappingFileLockException e) {
      HELD.add(port); // held by this JVM already
      return false;
    } catch (IOException e) {
      throw new UncheckedIOException("cannot reserve a port in " + LOCK_FILE + ": " + e.getMessage()
          + " (set java.io.tmpdir to a writable directory)", e);
    }
  }

  /** Where the kernel starts handing out ephemeral ports (60 000 ports above {@link #LOW} when it does not say). */
  private static int ephemeralStart() {
    try {
      // readAllLines, not readString: /proc files report size 0, and readString of one returned a stray "3" here.
      String range = String.join(" ", Files.readAllLines(Path.of("/proc/sys/net/ipv4/ip_local_port_range"))).strip();
      int start = Integer.parseInt(range.split("\\s+")[0]);
      return start > LOW + 1_000 ? start : 65_000;
    } catch (IOException | RuntimeException e) {
      return 32_768;
    }
  }
}
