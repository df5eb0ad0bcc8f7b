package dev.muster.console.internal;

import com.sun.net.httpserver.Headers;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.SecureRandom;
import java.util.Base64;
import java.util.List;

/**
 * Who may use the console's API: the holder of the token, as the session cookie the page got by showing it at
 * {@code POST /api/login}, or as {@code Authorization: Bearer TOKEN}; and, for a drain from the page, the CSRF token
 * {@code /api/session} gives a logged-in page. Secrets are compared in constant time ({@link MessageDigest#isEqual}).
 *
 * <p>The session is one random value per start, not per login: the console keeps no table of sessions to grow or
 * expire; a restart logs every browser out. The cookie's name carries the port, as cookies are not kept apart by
 * port and two consoles on one host must not overwrite each other's. Immutable; thread-safe.
 */
final class Access {
  /** How a request showed the token. */
  enum Via { NONE, COOKIE, BEARER }

  private final byte[] token;
  private final String session = random();
  private final String csrf = random();
  private final String cookieName;

  Access(String token, int port) {
    this.token = token.getBytes(StandardCharsets.UTF_8);
    this.cookieName = "muster-console-" + port;
  }

  /** How {@code request} showed the token, if it did; a wrong bearer or cookie is {@link Via#NONE}. */
  Via check(Headers request) {
    String auth = request.getFirst("Authorization");
    if (auth != null && auth.regionMatches(true, 0, "Bearer ", 0, 7)) {
      return matches(auth.substring(7).strip()) ? Via.BEARER : Via.NONE;
    }
    List<String> cookies = request.get("Cookie");
    if (cookies != null) {
      for (String header : cookies) {
        for (String pair : header.split(";")) {
          int eq = pair.indexOf('=');
          if (eq > 0 && pair.substring(0, eq).strip().equals(cookieName)
              && same(pair.substring(eq + 1).strip(), session)) {
            return Via.COOKIE;
          }
        }
      }
    }
    return Via.NONE;
  }

  /** Whether {@code sent} is the token. */
  boolean matches(String sent) {
    return sent != null && MessageDigest.isEqual(sent.getBytes(StandardCharsets.UTF_8), token);
  }

  /** Whether {@code sent} is the CSRF token. */
  boolean csrfMatches(String sent) {
    return same(sent, csrf);
  }

  String csrf() {
    return csrf;
  }

  /** The {@code Set-Cookie} value that logs a browser in: HttpOnly (no script reads it), sent only same-site. */
  String setCookie() {
    return cookieName + "=" + session + "; Path=/; HttpOnly; SameSite=Strict";
  }

  private static boolean same(String sent, String secret) {
    return sent != null && MessageDigest.isEqual(sent.getBytes(StandardCharsets.UTF_8),
        secret.getBytes(StandardCharsets.UTF_8));
  }

  private static String random() {
    byte[] b = new byte[32];
    new SecureRandom().nextBytes(b);
    return Base64.getUrlEncoder().withoutPadding().encodeToString(b);
  }
}
