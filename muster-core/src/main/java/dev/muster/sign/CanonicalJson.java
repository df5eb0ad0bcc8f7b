package dev.muster.sign;

import com.fasterxml.jackson.databind.JsonNode;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

/**
 * One text for every JSON value that parses to the same tree, so a signature survives a reader that re-serializes
 * a value (other member order, other spacing) and breaks with any change of meaning. The rules follow RFC 8785
 * (JCS) where Muster's values need them:
 * <ul>
 *   <li>no whitespace; object members sorted by name in UTF-16 code units ({@link String#compareTo}), arrays in
 *       order;
 *   <li>strings: {@code "} and {@code \} escaped with a backslash, U+0008, U+0009, U+000A, U+000C, U+000D as
 *       {@code \b \t \n \f \r}, other characters below U+0020 as <code>&#92;u00XX</code> (lowercase hex), a
 *       lone surrogate as <code>&#92;uXXXX</code>, everything else as itself;
 *   <li>integers in plain decimal; other numbers (no Muster field has one) as Java's {@link Double#toString} of the
 *       double they parse to, so two spellings of one double are one value; {@code true}, {@code false},
 *       {@code null} as themselves.
 * </ul>
 * Stateless.
 */
final class CanonicalJson {
  private CanonicalJson() {}

  static void write(JsonNode node, StringBuilder out) {
    switch (node.getNodeType()) {
      case OBJECT -> {
        List<Map.Entry<String, JsonNode>> members = new ArrayList<>(node.properties());
        members.sort(Map.Entry.comparingByKey());
        out.append('{');
        for (int i = 0; i < members.size(); i++) {
          if (i > 0) {
            out.append(',');
          }
          string(members.get(i).getKey(), out);
          out.append(':');
          write(members.get(i).getValue(), out);
        }
        out.append('}');
      }
      case ARRAY -> {
        out.append('[');
        for (int i = 0; i < node.size(); i++) {
          if (i > 0) {
            out.append(',');
          }
          write(node.get(i), out);
        }
        out.append(']');
      }
      case STRING -> string(node.textValue(), out);
      case NUMBER -> out.append(node.isIntegralNumber() ? node.bigIntegerValue().toString()
          : Double.toString(node.doubleValue()));
      case BOOLEAN -> out.append(node.booleanValue());
      case NULL -> out.append("null");
      default -> throw new IllegalArgumentException("not a JSON value: " + node.getNodeType());
    }
  }

  private static void string(String s, StringBuilder out) {
    out.append('"');
    for (int i = 0; i < s.length(); i++) {
      char c = s.charAt(i);
      switch (c) {
        case '"' -> out.append("\\\"");
        case '\\' -> out.append("\\\\");
        case '\b' -> out.append("\\b");
        case '\t' -> out.append("\\t");
        case '\n' -> out.append("\\n");
        case '\f' -> out.append("\\f");
        case '\r' -> out.append("\\r");
        default -> {
          boolean paired = Character.isHighSurrogate(c) && i + 1 < s.length()
              && Character.isLowSurrogate(s.charAt(i + 1));
          if (c < 0x20 || (Character.isSurrogate(c) && !paired)) {
            out.append(String.format("\\u%04x", (int) c));
          } else if (paired) {
            out.append(c).append(s.charAt(++i));
          } else {
            out.append(c);
          }
        }
      }
    }
    out.append('"');
  }
}
