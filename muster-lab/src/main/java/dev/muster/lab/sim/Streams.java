package dev.muster.lab.sim;

import java.util.SplittableRandom;

/**
 * The seeded random streams of one run, each a fresh generator on every call: a row of the table restarts the
 * pause stream exactly as seed 003's Go restarts {@code rand.NewSource(7)} for each of its rows, so both models and
 * every row see the same pauses (common random numbers: rows are monotone in the TTL, and the Muster model's count is
 * at least the seed model's sample by sample). What one model draws for phases or leader changes never shifts the
 * pauses another model sees.
 *
 * @param seed the run's seed (printed with every table)
 */
record Streams(long seed) {
  /** One Gaussian per pause. */
  SplittableRandom pauses() {
    return stream(0);
  }

  /** The phase of each pause in the keepalive period (Muster model). */
  SplittableRandom phases() {
    return stream(1);
  }

  /** The death phase of each detection-delay sample (the seed's own stream: 42 in its Go). */
  SplittableRandom deaths() {
    return stream(2);
  }

  /** When etcd's expiry scan runs relative to an expiry, for detection delays (Muster model). */
  SplittableRandom scans() {
    return stream(3);
  }

  /** Leader changes, a Poisson process (Muster model, --leader-changes-per-day). */
  SplittableRandom promotions() {
    return stream(4);
  }

  private SplittableRandom stream(int index) {
    SplittableRandom root = new SplittableRandom(seed);
    SplittableRandom s = root.split();
    for (int i = 0; i < index; i++) {
      s = root.split();
    }
    return s;
  }
}
