package dev.muster.chaos;

import dev.muster.InvalidInputException;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

/**
 * The fixed seeds CI replays ({@code chaos-seeds.txt} at the top of the repository): one line per seed,
 * {@code <checker> <members> <seed>  # what it found}; blank lines and {@code #} comments are skipped.
 *
 * <p>Stateless.
 */
public final class SeedsFile {
  /** The file's name at the top of the repository. */
  public static final String NAME = "chaos-seeds.txt";

  private SeedsFile() {}

  /** The seeds of {@code checker} (e.g. {@code chaos}) for {@code members}, in file order. */
  public static List<Long> read(Path file, String checker, int members) {
    List<String> lines;
    try {
      lines = Files.readAllLines(file);
    } catch (IOException e) {
      throw new InvalidInputException("seeds-file", file, "give a readable file of '<checker> <members> <seed>'"
          + " lines (" + e.getMessage() + ")");
    }
    List<Long> seeds = new ArrayList<>();
    for (int n = 0; n < lines.size(); n++) {
      String line = lines.get(n).replaceAll("#.*", "").trim();
      if (line.isEmpty()) {
        continue;
      }
      String[] f = line.split("\\s+");
      try {
        if (f.length != 3) {
          throw new NumberFormatException();
        }
        if (f[0].equals(checker) && Integer.parseInt(f[1]) == members) {
          seeds.add(Long.parseLong(f[2]));
        }
      } catch (NumberFormatException e) {
        throw new InvalidInputException("seeds-file", file + ":" + (n + 1), "write each line as"
            + " '<checker> <members> <seed>', e.g. 'chaos 1 42', not '" + lines.get(n).trim() + "'");
      }
    }
    return seeds;
  }

  /** The seeds file found in {@code dir} or the nearest directory above it. */
  public static Path find(Path dir) {
    for (Path d = dir.toAbsolutePath(); d != null; d = d.getParent()) {
      Path candidate = d.resolve(NAME);
      if (Files.isRegularFile(candidate)) {
        return candidate;
      }
    }
    throw new InvalidInputException("seeds-file", dir.toAbsolutePath().resolve(NAME), "run from the repository,"
        + " or give --seeds-file");
  }
}
