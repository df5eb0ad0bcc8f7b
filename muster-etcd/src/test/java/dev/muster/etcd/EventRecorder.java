package dev.muster.etcd;

import static org.awaitility.Awaitility.await;

import dev.muster.registry.RegistrationEvent;
import dev.muster.registry.RegistrationListener;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;

/** Collects a registration's events for assertions. */
final class EventRecorder implements RegistrationListener {
  private final List<RegistrationEvent> events = new CopyOnWriteArrayList<>();

  @Override
  public void onEvent(RegistrationEvent event) {
    events.add(event);
  }

  List<RegistrationEvent> events() {
    return List.copyOf(events);
  }

  List<RegistrationEvent.Type> types() {
    return events.stream().map(RegistrationEvent::type).toList();
  }

  RegistrationEvent awaitEvent(RegistrationEvent.Type type, Duration within) {
    await().atMost(within).until(() -> events.stream().anyMatch(e -> e.type() == type));
    return events.stream().filter(e -> e.type() == type).findFirst().orElseThrow();
  }
}
