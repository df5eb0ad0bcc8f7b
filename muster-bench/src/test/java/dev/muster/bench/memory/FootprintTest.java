package dev.muster.bench.memory;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

class FootprintTest {
  private static Footprint of(Footprint.Line... lines) {
    Map<String, Footprint.Line> byClass = new java.util.HashMap<>();
    for (Footprint.Line l : lines) {
      byClass.put(l.type(), l);
    }
    return new Footprint(byClass);
  }

  @Test
  void minusSubtractsClassByClassAndDropsClassesThatCancel() {
    Footprint after = of(new Footprint.Line("[B", 10, 400), new Footprint.Line("java.lang.String", 10, 240),
        new Footprint.Line("x.Only", 1, 16));
    Footprint before = of(new Footprint.Line("[B", 4, 100), new Footprint.Line("java.lang.String", 10, 240),
        new Footprint.Line("x.Gone", 2, 32));

    Footprint d = after.minus(before);

    assertThat(d.byClass()).containsOnlyKeys("[B", "x.Only", "x.Gone");
    assertThat(d.byClass().get("[B")).isEqualTo(new Footprint.Line("[B", 6, 300));
    assertThat(d.byClass().get("x.Gone")).isEqualTo(new Footprint.Line("x.Gone", -2, -32));
    assertThat(d.bytes()).isEqualTo(300 + 16 - 32);
    assertThat(d.count()).isEqualTo(6 + 1 - 2);
  }

  @Test
  void topKeepsTheLargestClassesAndPutsTheRestInOtherSoTheLinesAddUp() {
    Footprint f = of(new Footprint.Line("a", 1, 100), new Footprint.Line("b", 1, 300), new Footprint.Line("c", 1, 5),
        new Footprint.Line("d", 2, -200), new Footprint.Line("e", 1, 50));

    List<Footprint.Line> top = f.top(3, 10);

    assertThat(top).extracting(Footprint.Line::type).containsExactly("b", "d", "a", "(other)");
    assertThat(top.get(3)).isEqualTo(new Footprint.Line("(other)", 2, 55));
    assertThat(top.stream().mapToLong(Footprint.Line::bytes).sum()).isEqualTo(f.bytes());
  }

  @Test
  void topSendsClassesUnderTheThresholdToOtherEvenWhenThereIsRoom() {
    Footprint f = of(new Footprint.Line("big", 1, 1000), new Footprint.Line("tiny", 1, 3));

    assertThat(f.top(10, 4)).containsExactly(new Footprint.Line("big", 1, 1000), new Footprint.Line("(other)", 1, 3));
    assertThat(f.top(10, 1)).extracting(Footprint.Line::type).containsExactly("big", "tiny");
  }

  @Test
  void breakdownIsPerUnitWithShareOfTheTotal() {
    Footprint f = of(new Footprint.Line("dev.muster.registry.Instance", 100, 6400),
        new Footprint.Line("[B", 500, 3600));

    List<String> lines = f.breakdown(5, 100);

    assertThat(lines).containsExactly(
        "      64.0 B     1.00 obj   64.0%  Instance",
        "      36.0 B     5.00 obj   36.0%  byte[]");
  }

  @Test
  void shortNamesReadLikeJava() {
    assertThat(Footprint.shortName("dev.muster.cache.EndpointSet")).isEqualTo("EndpointSet");
    assertThat(Footprint.shortName("[B")).isEqualTo("byte[]");
    assertThat(Footprint.shortName("[Ljava.lang.Object;")).isEqualTo("java.lang.Object[]");
    assertThat(Footprint.shortName("[Ldev.muster.balance.EndpointState;")).isEqualTo("EndpointState[]");
    assertThat(Footprint.shortName("java.util.HashMap$Node")).isEqualTo("java.util.HashMap$Node");
  }

  @Test
  void jolCountsAnArrayWithItsHeaderAndAListWithoutWhatIsShared() {
    long[] array = new long[10];
    assertThat(Footprint.of((Object) array).bytes()).isEqualTo(16 + 10 * 8); // 12-byte header + length, 8-aligned

    long[] shared = new long[100];
    List<Object> owner = new ArrayList<>(List.of(shared, new long[1]));
    Footprint all = Footprint.of(owner);
    Footprint owned = Footprint.owned(owner, shared);
    assertThat(all.bytes() - owned.bytes()).isEqualTo(16 + 100 * 8);
    assertThat(owned.byClass().get("[J")).isEqualTo(new Footprint.Line("[J", 1, 24));
  }
}
