package dev.muster.chaos;

/** An invariant did not hold: what Muster promised and etcd shows otherwise. */
final class Divergence extends RuntimeException {
  private static final long serialVersionUID = 1L;

  Divergence(String message) {
    super(message, null, false, false);
  }
}
