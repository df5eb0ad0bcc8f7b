package dev.muster.registry;

/**
 * Whether an instance takes new calls: {@code UP} does; {@code STARTING} is registered but not ready yet (caches
 * warming, a JIT still cold) and gets none; {@code DRAINING} finishes what it has and gets no more.
 *
 * <p>A consumer older than {@code STARTING} cannot decode it and leaves such a record out (it counts as
 * malformed): the safe direction.
 */
public enum InstanceState {
  UP,
  /** Registered before it is ready: never picked, not even in panic. {@code Registration.ready()} makes it UP. */
  STARTING,
  DRAINING;

  /** True for {@code UP} only: the one state a balancer offers new calls to. */
  public boolean takesNewCalls() {
    return this == UP;
  }
}
