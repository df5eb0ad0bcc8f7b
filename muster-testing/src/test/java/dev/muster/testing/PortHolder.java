package dev.muster.testing;

import dev.muster.testing.internal.FreePorts;
import java.util.StringJoiner;

/** A JVM that picks {@code args[0]} ports, prints them on one line and waits to be killed ({@link FreePortsIT}). */
public final class PortHolder {
  private PortHolder() {}

  public static void main(String[] args) throws InterruptedException {
    StringJoiner ports = new StringJoiner(" ");
    for (int i = 0; i < Integer.parseInt(args[0]); i++) {
      ports.add(Integer.toString(FreePorts.pick()));
    }
    System.out.println(ports);
    System.out.flush();
    Thread.sleep(120_000);
  }
}
