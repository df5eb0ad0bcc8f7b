package dev.muster.lab;

import java.io.IOException;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * One process a scenario started from Muster's jar ({@code muster register ...}, {@code muster call ...}), with its
 * stdout in {@code NAME.jsonl} and stderr in {@code NAME.err} in the scenario's directory. Signals go by pid.
 */
public final class LabProcess {
  private final String name;
  private final Process process;
  private final Path log;
  private final List<String> command;

  LabProcess(String name, Process process, Path log, List<String> command) {
    this.name = name;
    this.process = process;
    this.log = log;
    this.command = command;
  }

  public String name() {
    return name;
  }

  public long pid() {
    return process.pid();
  }

  public Path log() {
    return log;
  }

  public boolean isAlive() {
    return process.isAlive();
  }

  /** The JSON lines written so far. */
  public JsonLog json() {
    return JsonLog.read(log);
  }

  public void stop() {
    signal("STOP");
  }

  public void cont() {
    signal("CONT");
  }

  /** SIGTERM: graceful stop (the registrar drains and revokes, a caller prints its summary). */
  public void term() {
    process.toHandle().destroy();
  }

  /** SIGKILL. */
  public void kill9() {
    process.toHandle().destroyForcibly();
  }

  /** Waits for the process to exit; true if it did within {@code limit}. */
  public boolean awaitExit(Duration limit) {
    try {
      return process.waitFor(limit.toMillis(), TimeUnit.MILLISECONDS);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      return false;
    }
  }

  private void signal(String sig) {
    try {
      Process p = new ProcessBuilder("kill", "-s", sig, Long.toString(process.pid())).inheritIO().start();
      if (!p.waitFor(10, TimeUnit.SECONDS) || p.exitValue() != 0) {
        throw new LabException("kill -s " + sig + " " + process.pid() + " (" + name + ") failed");
      }
    } catch (IOException e) {
      throw new LabException("cannot signal " + name + ": " + e.getMessage());
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new LabException("interrupted while signalling " + name);
    }
  }

  @Override
  public String toString() {
    return name + " (pid " + process.pid() + "): " + String.join(" ", command);
  }
}
