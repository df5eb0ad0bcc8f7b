package dev.muster.console.internal;

import static org.assertj.core.api.Assertions.assertThat;

import dev.muster.cache.EndpointDelta;
import dev.muster.cache.EndpointDelta.Kind;
import dev.muster.registry.Instance;
import dev.muster.registry.InstanceState;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import org.junit.jupiter.api.Test;

class EventDeriverTest {
  private final EventDeriver deriver = new EventDeriver("default", "shop");
  private final Instance a = Instance.of("shop", "10.0.0.1", 80).id("a");
  private final Instance b = Instance.of("shop", "10.0.0.2", 80).id("b").version("v2");

  private static EndpointDelta delta(Kind kind, List<Instance> added, List<Instance> removed,
      List<Instance> changed) {
    return new EndpointDelta(kind, added, removed, changed);
  }

  private static List<String> types(List<ConsoleEvent.Draft> drafts) {
    return drafts.stream().map(ConsoleEvent.Draft::type).toList();
  }

  @Test
  void theFirstSnapshotIsAJoinPerInstance() {
    List<ConsoleEvent.Draft> out = deriver.onChange(delta(Kind.SNAPSHOT, List.of(a, b), List.of(), List.of()));
    assertThat(types(out)).containsExactly("join", "join");
    assertThat(out.get(1).version()).isEqualTo("v2");
    assertThat(out.get(1).id()).isEqualTo("b");
    assertThat(out.get(0).detail()).contains("10.0.0.1:80", "first snapshot");
  }

  @Test
  void aRemovalAfterDrainingIsALeaveAndWithoutDrainingALeaseLoss() {
    deriver.onChange(delta(Kind.SNAPSHOT, List.of(a, b), List.of(), List.of()));
    Instance draining = a.state(InstanceState.DRAINING);
    assertThat(types(deriver.onChange(delta(Kind.UPDATE, List.of(), List.of(), List.of(draining)))))
        .containsExactly("drain");
    assertThat(types(deriver.onChange(delta(Kind.UPDATE, List.of(), List.of(draining), List.of()))))
        .containsExactly("leave");
    List<ConsoleEvent.Draft> lost = deriver.onChange(delta(Kind.UPDATE, List.of(), List.of(b), List.of()));
    assertThat(types(lost)).containsExactly("lease-lost");
    assertThat(lost.get(0).detail()).contains("without draining");
  }

  @Test
  void anIdBackAfterLeavingIsAReRegistration() {
    deriver.onChange(delta(Kind.SNAPSHOT, List.of(a), List.of(), List.of()));
    deriver.onChange(delta(Kind.UPDATE, List.of(), List.of(a), List.of()));
    assertThat(types(deriver.onChange(delta(Kind.UPDATE, List.of(a), List.of(), List.of()))))
        .containsExactly("re-register");
    assertThat(types(deriver.onChange(delta(Kind.UPDATE, List.of(b), List.of(), List.of()))))
        .containsExactly("join");
  }

  @Test
  void aResyncIsReportedBeforeWhatItChanged() {
    deriver.onChange(delta(Kind.SNAPSHOT, List.of(a), List.of(), List.of()));
    List<ConsoleEvent.Draft> out = deriver.onChange(delta(Kind.RESYNC, List.of(b), List.of(a), List.of()));
    assertThat(types(out)).containsExactly("resync", "join", "lease-lost");
    assertThat(out.get(0).id()).isEmpty();
    assertThat(out.get(0).detail()).contains("+1 -1 ~0");
  }

  @Test
  void aChangeSaysWhatChanged() {
    deriver.onChange(delta(Kind.SNAPSHOT, List.of(a.state(InstanceState.STARTING)), List.of(), List.of()));
    assertThat(types(deriver.onChange(delta(Kind.UPDATE, List.of(), List.of(), List.of(a))))).containsExactly("up");
    List<ConsoleEvent.Draft> out = deriver.onChange(delta(Kind.UPDATE, List.of(), List.of(), List.of(a.weight(5))));
    assertThat(types(out)).containsExactly("change");
    assertThat(out.get(0).detail()).isEqualTo("weight 100 -> 5");
  }

  @Test
  void stalenessAndRecoveryAreServiceWideEvents() {
    ConsoleEvent.Draft stale = deriver.onStale(Instant.parse("2026-01-01T00:00:00Z"), "connection refused");
    assertThat(stale.type()).isEqualTo("stale");
    assertThat(stale.detail()).contains("connection refused");
    assertThat(deriver.onRecovered(Duration.ofMillis(1500)).detail()).contains("1500 ms");
  }
}
