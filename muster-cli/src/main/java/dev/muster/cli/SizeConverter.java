package dev.muster.cli;

import java.util.Locale;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import picocli.CommandLine.ITypeConverter;
import picocli.CommandLine.TypeConversionException;

/**
 * Parses a size in bytes written as {@code 2GiB}, {@code 512MiB}, {@code 8GB}, {@code 100KB} or a plain number of
 * bytes. Binary units (KiB, MiB, GiB) are powers of 1024, decimal ones (KB, MB, GB) powers of 1000, as etcd's own
 * {@code --quota-backend-bytes} documentation counts them.
 */
final class SizeConverter implements ITypeConverter<Long> {
  private static final Pattern SIZE = Pattern.compile("(\\d{1,15})\\s*([KMGT]i?B|B)?");

  @Override
  public Long convert(String value) {
    Matcher m = SIZE.matcher(value.trim().toUpperCase(Locale.ROOT).replace("IB", "iB"));
    if (!m.matches()) {
      throw new TypeConversionException("'" + value + "' is not a size: write it like 2GiB, 512MiB, 8GB or 1000000");
    }
    long n = Long.parseLong(m.group(1));
    String unit = m.group(2) == null ? "B" : m.group(2);
    long factor = switch (unit) {
      case "B" -> 1;
      case "KB" -> 1_000L;
      case "MB" -> 1_000_000L;
      case "GB" -> 1_000_000_000L;
      case "TB" -> 1_000_000_000_000L;
      case "KiB" -> 1L << 10;
      case "MiB" -> 1L << 20;
      case "GiB" -> 1L << 30;
      default -> 1L << 40; // TiB
    };
    if (n == 0 || n > Long.MAX_VALUE / factor) {
      throw new TypeConversionException("'" + value + "' is not a usable size: use more than 0 and less than 8 EiB, written like 2GiB");
    }
    return n * factor;
  }

  /** {@code bytes} in the largest binary unit that keeps one decimal: {@code 1.5 GiB}, {@code 20.0 KiB}. */
  static String show(long bytes) {
    String[] units = {"B", "KiB", "MiB", "GiB", "TiB"};
    double v = bytes;
    int u = 0;
    while (v >= 1024 && u < units.length - 1) {
      v /= 1024;
      u++;
    }
    return u == 0 ? bytes + " B" : String.format(Locale.ROOT, "%.1f %s", v, units[u]);
  }
}
