package dev.muster.registry;

/**
 * Whether bytes are text the streaming decoder may read directly: strict UTF-8 exactly as the JDK's decoder with
 * {@code REPORT} accepts it (no overlong forms, no surrogates, nothing above U+10FFFF, no cut-off sequence), with no
 * NUL byte and no byte-order mark. The last two keep Jackson's byte parser from guessing another encoding
 * (UTF-16/32) or skipping a mark that the tree path, which parses the decoded string, would refuse. Allocation-free,
 * which is why it is written out rather than decoding with a {@code CharsetDecoder}. Stateless.
 */
final class Utf8 {
  private Utf8() {}

  static boolean isValid(byte[] b) {
    int n = b.length;
    if (n >= 3 && (b[0] & 0xFF) == 0xEF && (b[1] & 0xFF) == 0xBB && (b[2] & 0xFF) == 0xBF) {
      return false;
    }
    int i = 0;
    while (i < n) {
      int c = b[i] & 0xFF;
      if (c < 0x80) {
        if (c == 0) {
          return false;
        }
        i++;
        continue;
      }
      int need;
      int lo = 0x80;
      int hi = 0xBF; // the allowed range of the second byte
      if (c >= 0xC2 && c <= 0xDF) {
        need = 1;
      } else if (c >= 0xE0 && c <= 0xEF) {
        need = 2;
        lo = c == 0xE0 ? 0xA0 : 0x80;
        hi = c == 0xED ? 0x9F : 0xBF;
      } else if (c >= 0xF0 && c <= 0xF4) {
        need = 3;
        lo = c == 0xF0 ? 0x90 : 0x80;
        hi = c == 0xF4 ? 0x8F : 0xBF;
      } else {
        return false;
      }
      if (i + need >= n) { // cut off
        return false;
      }
      int second = b[i + 1] & 0xFF;
      if (second < lo || second > hi) {
        return false;
      }
      for (int k = 2; k <= need; k++) {
        int next = b[i + k] & 0xFF;
        if (next < 0x80 || next > 0xBF) {
          return false;
        }
      }
      i += need + 1;
    }
    return true;
  }
}
