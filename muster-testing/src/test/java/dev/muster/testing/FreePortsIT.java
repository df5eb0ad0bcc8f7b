package dev.muster.testing;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.muster.testing.internal.FreePorts;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Arrays;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.stream.Collectors;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * Test JVMs run side by side, so two of them must never be handed one port. A second JVM holds 300 ports while this
 * one picks 1,000: none in common. (Without the reservation, picks spread over about 12,700 ports would share about
 * 24 of them.) And none is in the kernel's ephemeral range, where an outgoing connection could take a port a member
 * is about to bind again.
 */
@Timeout(120)
class FreePortsIT {
  @Test
  void aPortHeldByAnotherJvmIsNeverPickedAndNoneIsEphemeral() throws Exception {
    List<String> command = ChildProcess.javaCommand(ChildProcess.FAST_START_JVM_FLAGS,
        List.of("-cp", System.getProperty("java.class.path"), PortHolder.class.getName(), "300"));
    try (ChildProcess holder = ChildProcess.start("port-holder", command)) {
      await().atMost(Duration.ofSeconds(60)).until(() -> !holder.stdout().isEmpty() || !holder.isAlive());
      assertThat(holder.isAlive()).as("the holder JVM: %s", holder).isTrue();
      Set<Integer> held = Arrays.stream(holder.stdout().get(0).trim().split(" ")).map(Integer::valueOf)
          .collect(Collectors.toSet());
      assertThat(held).hasSize(300);

      Set<Integer> mine = new HashSet<>();
      for (int i = 0; i < 1_000; i++) {
        mine.add(FreePorts.pick());
      }
      assertThat(mine).as("this JVM never picks a port twice").hasSize(1_000);
      assertThat(mine).as("ports the other JVM holds").doesNotContainAnyElementsOf(held);

      int ephemeralStart = Integer.parseInt(
          Files.readAllLines(Path.of("/proc/sys/net/ipv4/ip_local_port_range")).get(0).trim().split("\\s+")[0]);
      assertThat(mine).allMatch(p -> p < ephemeralStart, "below " + ephemeralStart);
    }
  }
}
