package dev.muster.bench.memory;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.muster.bench.support.BenchException;
import org.junit.jupiter.api.Test;

class HeapHistogramTest {
  @Test
  void parsesClassLinesWithAndWithoutModuleAndSkipsHeaderAndTotal() {
    String text = """
         num     #instances         #bytes  class name (module)
        -------------------------------------------------------
           1:          9666         446640  [B (java.base@17.0.15)
           2:          9560         229440  java.lang.String (java.base@17.0.15)
           3:            10            640  dev.muster.registry.Instance
           4:             2             48  dev.muster.registry.Instance
        Total         19238         676768
        """;

    Footprint f = HeapHistogram.parse(text);

    assertThat(f.byClass()).containsOnlyKeys("[B", "java.lang.String", "dev.muster.registry.Instance");
    assertThat(f.byClass().get("[B")).isEqualTo(new Footprint.Line("[B", 9666, 446640));
    assertThat(f.byClass().get("dev.muster.registry.Instance"))
        .isEqualTo(new Footprint.Line("dev.muster.registry.Instance", 12, 688));
    assertThat(f.bytes()).isEqualTo(676768);
  }

  @Test
  void refusesTextWithoutAClassLine() {
    assertThatThrownBy(() -> HeapHistogram.parse("Command not supported\n")).isInstanceOf(BenchException.class)
        .hasMessageContaining("Command not supported");
  }

  @Test
  void aLiveHistogramSeesWhatThisTestHolds() {
    Footprint before = HeapHistogram.take();
    Object[] held = new Object[50_000];
    Footprint grown = HeapHistogram.since(before);
    assertThat(grown.byClass().get("[Ljava.lang.Object;").bytes()).isGreaterThanOrEqualTo(16 + 50_000 * 4);
    java.lang.ref.Reference.reachabilityFence(held);
  }
}
