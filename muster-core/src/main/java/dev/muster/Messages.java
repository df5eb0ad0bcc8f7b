package dev.muster;

import java.time.Duration;

/** Text helpers that keep error messages on one line and readable; stateless. */
final class Messages {
  /** Values longer than this are cut in messages: a message names the value, it need not reprint 16 KiB. */
  static final int MAX_QUOTED_CHARS = 100;

  private Messages() {}

  static String oneLine(String text) {
    return text.strip().replaceAll("\\s*\\R\\s*", " ");
  }

  /** {@code "value"} with quotes, backslashes and control characters escaped, cut after {@link #MAX_QUOTED_CHARS}. */
  static String quote(String value) {
    StringBuilder out = new StringBuilder(Math.min(value.length(), MAX_QUOTED_CHARS) + 16).append('"');
    int shown = Math.min(value.length(), MAX_QUOTED_CHARS);
    for (int i = 0; i < shown; i++) {
      char c = value.charAt(i);
      switch (c) {
        case '"' -> out.append("\\\"");
        case '\\' -> out.append("\\\\");
        case '\n' -> out.append("\\n");
        case '\r' -> out.append("\\r");
        case '\t' -> out.append("\\t");
        default -> {
          if (Character.isISOControl(c)) {
            out.append(String.format("\\u%04x", (int) c));
          } else {
            out.append(c);
          }
        }
      }
    }
    out.append('"');
    if (shown < value.length()) {
      out.append("... (").append(value.length()).append(" characters)");
    }
    return out.toString();
  }

  /** A duration the way the command line writes them: {@code 12s}, {@code 1500ms}, {@code 2m}. */
  static String duration(Duration d) {
    long millis = d.toMillis();
    if (millis % 60_000 == 0 && millis != 0) {
      return millis / 60_000 + "m";
    }
    if (millis % 1000 == 0) {
      return millis / 1000 + "s";
    }
    return millis + "ms";
  }
}
