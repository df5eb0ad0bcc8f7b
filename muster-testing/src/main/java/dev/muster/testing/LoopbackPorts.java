package dev.muster.testing;

import dev.muster.testing.internal.FreePorts;

/**
 * Loopback ports for processes a test, the lab or the bench starts (a provider's HTTP port, a ZooKeeper server).
 * A port was free a moment ago; something else may take it before the child binds it, so a child that fails to
 * bind is started again on a fresh one.
 */
public final class LoopbackPorts {
  private LoopbackPorts() {}

  /** A port on 127.0.0.1 that nothing listened on a moment ago. */
  public static int pick() {
    return FreePorts.pick();
  }
}
