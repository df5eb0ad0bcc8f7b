package dev.muster.registry;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.HashSet;
import java.util.Random;
import java.util.Set;
import org.junit.jupiter.api.Test;

class InstanceIdGeneratorTest {

  @Test
  void idIsHostPortAndSixHexDigits() {
    InstanceIdGenerator ids = new InstanceIdGenerator(() -> "web-7", new Random(42));

    assertThat(ids.next(8080)).matches("^[a-z0-9-]+-8080-[0-9a-f]{6}$").startsWith("web-7-8080-");
  }

  @Test
  void theSameSeedGivesTheSameIds() {
    String first = new InstanceIdGenerator(() -> "h", new Random(7)).next(80);
    String second = new InstanceIdGenerator(() -> "h", new Random(7)).next(80);

    assertThat(first).isEqualTo(second);
  }

  @Test
  void successiveIdsDiffer() {
    InstanceIdGenerator ids = new InstanceIdGenerator(() -> "h", new Random(7));
    Set<String> seen = new HashSet<>();
    for (int i = 0; i < 100; i++) {
      seen.add(ids.next(80));
    }

    assertThat(seen).hasSize(100);
  }

  @Test
  void sanitizesAHostNameIntoADnsLabel() {
    InstanceIdGenerator ids = new InstanceIdGenerator(() -> "My_Host.example.com", new Random(1));

    assertThat(ids.next(8080)).matches("^my-host-example-com-8080-[0-9a-f]{6}$");
  }

  @Test
  void trimsDashesThatSanitizingLeavesAtTheEnds() {
    assertThat(InstanceIdGenerator.hostLabel("_Host_", 50)).isEqualTo("host");
    assertThat(InstanceIdGenerator.hostLabel("a..b", 50)).isEqualTo("a-b");
  }

  @Test
  void cutsALongHostNameSoTheWholeIdIsAValidName() {
    InstanceIdGenerator ids = new InstanceIdGenerator(() -> "a".repeat(40) + "-" + "b".repeat(40), new Random(1));

    String id = ids.next(65_535);

    assertThat(id).hasSizeLessThanOrEqualTo(63);
    assertThat(Names.isValid(id)).isTrue();
    assertThat(id).startsWith("a".repeat(40) + "-b").matches(".*[a-z]-65535-[0-9a-f]{6}$");
  }

  @Test
  void aCutThatEndsOnADashDropsTheDash() {
    assertThat(InstanceIdGenerator.hostLabel("abc-def", 4)).isEqualTo("abc");
  }

  @Test
  void fallsBackToInstanceWhenNothingOfTheHostNameIsUsable() {
    assertThat(new InstanceIdGenerator(() -> "___", new Random(1)).next(80)).startsWith("instance-80-");
    assertThat(new InstanceIdGenerator(() -> null, new Random(1)).next(80)).startsWith("instance-80-");
  }

  @Test
  void theSystemGeneratorMakesValidIds() {
    String id = InstanceIdGenerator.system().next(8080);

    assertThat(id).matches("^[a-z0-9-]+-8080-[0-9a-f]{6}$");
    assertThat(Names.isValid(id)).isTrue();
  }
}
