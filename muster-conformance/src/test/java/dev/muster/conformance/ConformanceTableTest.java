package dev.muster.conformance;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * The conformance table (docs/adapters/README.md) is whole: every scenario the suite runs is a row, every adapter
 * a column, each cell either
 * {@code ✓} (the ITs assert it) or {@code –} with the reason the adapter does not apply it.
 */
class ConformanceTableTest {
  @Test
  void everyCellIsAGuaranteeOrAReason() {
    Map<String, Map<String, String>> table = ConformanceTable.documented();
    assertThat(table.keySet()).containsExactlyElementsOf(ConformanceTable.ROWS);
    table.forEach((row, cells) -> {
      assertThat(cells.keySet()).as(row).containsExactlyElementsOf(ConformanceTable.COLUMNS);
      cells.forEach((column, cell) -> assertThat(cell).as("(%s, %s)", row, column)
          .matches(c -> c.equals("✓") || c.startsWith("✓ ") || c.matches("– \\S.{10,}"),
              "✓, or – followed by the reason"));
    });
  }
}
