package dev.muster.testing.internal;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;

/**
 * Picks loopback ports that were free a moment ago. There is a race between picking and etcd binding;
 * the launcher detects "address already in use" in the member's log and retries with new ports.
 */
public final class FreePorts {
  private FreePorts() {}

  public static int pick() {
    try (ServerSocket s = new ServerSocket()) {
      s.setReuseAddress(false);
      s.bind(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0));
      return s.getLocalPort();
    } catch (IOException e) {
      throw new UncheckedIOException("no free loopback port: " + e.getMessage(), e);
    }
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
}
