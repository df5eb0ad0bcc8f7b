package dev.muster.conformance;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.stream.Stream;

/** The project's Markdown pages, for the tests that read them ({@link DocsTest}, {@link FigureTraceTest}). */
final class DocPages {
  /** The checkout's root: {@code -Dmuster.root}, else the module's parent. */
  static final Path ROOT = Path.of(System.getProperty("muster.root", "..")).toAbsolutePath().normalize();

  private DocPages() {}

  /** README.md, CHANGELOG.md (when present) and every page under docs/, in that order. */
  static List<Path> all() throws IOException {
    List<Path> pages = new ArrayList<>(List.of(ROOT.resolve("README.md"), ROOT.resolve("CHANGELOG.md")));
    pages.removeIf(p -> !Files.exists(p));
    try (Stream<Path> docs = Files.walk(ROOT.resolve("docs"))) {
      docs.filter(p -> p.toString().endsWith(".md")).sorted().forEach(pages::add);
    }
    return pages;
  }
}
