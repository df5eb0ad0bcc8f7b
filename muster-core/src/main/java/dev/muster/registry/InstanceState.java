package dev.muster.registry;

/** Whether an instance takes new calls: {@code UP} does, {@code DRAINING} finishes what it has and gets no more. */
public enum InstanceState {
  UP,
  DRAINING
}
