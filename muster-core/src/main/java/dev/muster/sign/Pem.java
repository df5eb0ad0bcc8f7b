package dev.muster.sign;

import dev.muster.InvalidInputException;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.util.Base64;

/**
 * Reads and writes the one PEM block of a key file: {@code -----BEGIN PRIVATE KEY-----} (PKCS#8) or
 * {@code -----BEGIN PUBLIC KEY-----} (X.509 SubjectPublicKeyInfo), as OpenSSL and {@code muster keygen} write them.
 * Every failure is an {@link InvalidInputException} naming the field (the key's role) and the file, on one line.
 * Stateless.
 */
final class Pem {
  static final String PRIVATE = "PRIVATE KEY";
  static final String PUBLIC = "PUBLIC KEY";

  /** A key file is a few hundred bytes; anything far larger is not one (and is not read whole). */
  private static final long MAX_FILE_BYTES = 64 * 1024;

  private Pem() {}

  /** The text of {@code file}, refused by name when it is missing, unreadable or too large. */
  static String read(String field, Path file) {
    if (file == null) {
      throw new InvalidInputException(field, null, "give the path of a PEM key file");
    }
    try {
      if (Files.isDirectory(file)) {
        throw new InvalidInputException(field, file.toString(), "it is a directory: give the path of a PEM key file");
      }
      long size = Files.size(file);
      if (size > MAX_FILE_BYTES) {
        throw new InvalidInputException(field, file.toString(), "the file is " + size + " bytes, too large for a key"
            + " file: give the path of a PEM key file");
      }
      return Files.readString(file, StandardCharsets.ISO_8859_1); // any bytes: a binary file is "not PEM"
    } catch (NoSuchFileException e) {
      throw new InvalidInputException(field, file.toString(), "no such file: give the path of a PEM key file");
    } catch (IOException e) {
      throw new InvalidInputException(field, file.toString(), Files.exists(file)
          ? "the file is not readable by this process (" + e.getClass().getSimpleName() + "): check its permissions"
          : "cannot read it: " + e.getMessage());
    }
  }

  /**
   * The DER bytes of the block labelled {@code label}. {@code source} names the input in messages (a file name or
   * "the PEM text"); {@code wanted} says which kind of key file is expected, for the advice.
   */
  static byte[] decode(String field, String source, String text, String label, String wanted) {
    String begin = "-----BEGIN " + label + "-----";
    String end = "-----END " + label + "-----";
    int from = text.indexOf(begin);
    if (from < 0) {
      String other = otherLabel(text);
      throw new InvalidInputException(field, source, other == null
          ? "not a PEM file (no " + begin + " line): " + wanted
          : "it holds a PEM \"" + other + "\", not a \"" + label + "\": " + wanted);
    }
    int to = text.indexOf(end, from);
    if (to < 0) {
      throw new InvalidInputException(field, source, "the PEM block has no " + end + " line: " + wanted);
    }
    if (text.indexOf(begin, to) >= 0) {
      throw new InvalidInputException(field, source, "it holds more than one " + label + ": give a file with one");
    }
    String body = text.substring(from + begin.length(), to).replaceAll("\\s", "");
    try {
      byte[] der = Base64.getDecoder().decode(body);
      if (der.length == 0) {
        throw new IllegalArgumentException("empty");
      }
      return der;
    } catch (IllegalArgumentException e) {
      throw new InvalidInputException(field, source, "the text between its BEGIN and END lines is not base64: "
          + wanted);
    }
  }

  /** A PEM block of {@code der}, base64 in lines of 64 characters, ending with a newline. */
  static String encode(String label, byte[] der) {
    String body = Base64.getMimeEncoder(64, "\n".getBytes(StandardCharsets.US_ASCII)).encodeToString(der);
    return "-----BEGIN " + label + "-----\n" + body + "\n-----END " + label + "-----\n";
  }

  private static String otherLabel(String text) {
    int at = text.indexOf("-----BEGIN ");
    if (at < 0) {
      return null;
    }
    int close = text.indexOf("-----", at + "-----BEGIN ".length());
    return close < 0 ? null : text.substring(at + "-----BEGIN ".length(), close);
  }
}
