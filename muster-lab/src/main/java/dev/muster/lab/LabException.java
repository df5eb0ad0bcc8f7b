package dev.muster.lab;

/** A scenario could not run as planned (a process did not start, an expected event never came). */
public final class LabException extends RuntimeException {
  private static final long serialVersionUID = 1L;

  public LabException(String message) {
    super(message);
  }
}
