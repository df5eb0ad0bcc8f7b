package dev.muster.cli;

import java.io.PrintWriter;
import java.util.List;

/** Plain-text tables for the commands' human output: columns padded to their widest cell, two spaces apart. */
final class Tables {
  private Tables() {}

  /** Prints {@code rows} (the first is usually the header), every row with the same number of cells. */
  static void printAligned(PrintWriter out, List<String[]> rows) {
    int columns = rows.stream().mapToInt(r -> r.length).max().orElse(0);
    int[] widths = new int[columns];
    for (String[] row : rows) {
      for (int c = 0; c < row.length; c++) {
        widths[c] = Math.max(widths[c], row[c].length());
      }
    }
    for (String[] row : rows) {
      StringBuilder line = new StringBuilder();
      for (int c = 0; c < row.length; c++) {
        line.append(row[c]);
        if (c < row.length - 1) {
          line.append(" ".repeat(widths[c] - row[c].length() + 2));
        }
      }
      out.println(line);
    }
  }
}
