package dev.muster.bench.etcd;

/**
 * One side of an end-to-end measurement ({@link VisibilityRig}, {@link FloorRig}): a change made and undone, each
 * timed until the last of its consumers saw it. {@link VisibilityRig#measureInTurns} drives several in turns.
 */
interface Rig extends AutoCloseable {
  /** How many consumers each change must reach. */
  int consumers();

  /** Makes change {@code index} (a new one each call) and undoes it, timing both. */
  VisibilityRig.Sample measure(int index);

  @Override
  void close();
}
