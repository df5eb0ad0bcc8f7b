package dev.muster.etcd.internal;

import io.etcd.jetcd.common.exception.ErrorCode;
import io.etcd.jetcd.common.exception.EtcdException;
import io.grpc.Status;
import io.grpc.StatusException;
import io.grpc.StatusRuntimeException;
import java.util.concurrent.CancellationException;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeoutException;

/**
 * Classifies what jetcd throws by gRPC status code, never by message text (STYLE §7).
 *
 * <p>Stateless.
 */
final class EtcdErrors {
  /** What a failed etcd call means to a caller. */
  enum Kind {
    /** The lease does not exist (expired or revoked). */
    LEASE_NOT_FOUND,
    /** etcd could not be reached in time, has no leader, or the connection broke: try again later. */
    UNAVAILABLE,
    /** etcd knows the user, but its roles do not allow the key (PERMISSION_DENIED). */
    DENIED,
    /**
     * etcd did not accept the client's identity: a wrong password or unknown user (the token request fails with
     * INVALID_ARGUMENT, which gRPC reports as UNAUTHENTICATED caused by it), no user where auth is on
     * (INVALID_ARGUMENT), or a certificate refused in the TLS handshake. An expired token alone (UNAUTHENTICATED
     * without that cause) is not this: jetcd asks for a new one, so that counts as {@link #UNAVAILABLE}.
     */
    UNAUTHENTICATED,
    /** Anything else: a bug or a refusal that retrying will not fix. */
    OTHER
  }

  private EtcdErrors() {}

  /**
   * Whether {@code t} (or a cause) is etcd answering that the member has no leader ({@code etcdserver: no leader}:
   * a watch with {@code requireLeader}, or any call during an election). etcd answered: the connection works, and
   * a new one would meet the same election. etcd sends it as UNAVAILABLE with that text and no other mark; its own Go
   * client tells it by the text too ({@code rpctypes.ErrNoLeader}, matched by {@code ErrorDesc}), and so does this.
   */
  static boolean isNoLeader(Throwable t) {
    for (Throwable c = t; c != null; c = c.getCause() == c ? null : c.getCause()) {
      String m = c.getMessage();
      if (m != null && m.contains("etcdserver: no leader")) {
        return true;
      }
    }
    return false;
  }

  /** Whether {@code t} (or a cause) is etcd's "required revision has been compacted" answer to a range. */
  static boolean isCompacted(Throwable t) {
    for (Throwable c = t; c != null; c = c.getCause() == c ? null : c.getCause()) {
      if (c instanceof io.etcd.jetcd.common.exception.CompactedException) {
        return true;
      }
      String m = c.getMessage();
      if (m != null && m.contains("required revision has been compacted")) {
        return true;
      }
    }
    return false;
  }

  static Kind classify(Throwable t) {
    Throwable e = unwrap(t);
    if (certificateRefused(e)) {
      return Kind.UNAUTHENTICATED;
    }
    if (e instanceof TimeoutException || e instanceof CancellationException || e instanceof java.io.IOException) {
      return Kind.UNAVAILABLE;
    }
    Status.Code code = code(e);
    if (code == null) {
      return Kind.OTHER;
    }
    if (code == Status.Code.UNAUTHENTICATED) {
      // jetcd's token request failed with etcd's answer as the cause: wrong password, unknown user (INVALID_ARGUMENT)
      // or authentication not enabled (FAILED_PRECONDITION). Without such a cause: an expired token, renewed.
      java.util.Set<Status.Code> causes = causeCodes(e);
      return causes.contains(Status.Code.INVALID_ARGUMENT) || causes.contains(Status.Code.FAILED_PRECONDITION)
          ? Kind.UNAUTHENTICATED : Kind.UNAVAILABLE;
    }
    return switch (code) {
      case PERMISSION_DENIED -> Kind.DENIED;
      case INVALID_ARGUMENT -> Kind.UNAUTHENTICATED; // Muster's requests are well formed: "user name is empty"
      case NOT_FOUND -> Kind.LEASE_NOT_FOUND;
      case UNAVAILABLE, DEADLINE_EXCEEDED, CANCELLED, ABORTED, RESOURCE_EXHAUSTED, UNKNOWN -> Kind.UNAVAILABLE;
      default -> Kind.OTHER;
    };
  }

  /**
   * What a watch stream's error says about the connection. As {@link #classify}, except that CANCELLED is etcd
   * refusing this one watch, not a connection failure: jetcd 0.8.6 turns etcd's "created and cancelled" answer
   * (permission denied, invalid auth token) into a CANCELLED status, and a watch we cancelled ourselves never
   * reports. Everything but {@link Kind#UNAVAILABLE} leaves the shared connection alone.
   */
  static Kind classifyWatch(Throwable t) {
    Throwable e = unwrap(t);
    if (code(e) == Status.Code.CANCELLED) {
      return Kind.OTHER;
    }
    return classify(e) == Kind.UNAVAILABLE ? Kind.UNAVAILABLE : Kind.OTHER;
  }

  /**
   * Whether a TLS handshake failed over a certificate, by type: a certificate or path exception anywhere in the
   * chain (our CA did not sign etcd's certificate, a hostname mismatch, an expired certificate), or an
   * {@link javax.net.ssl.SSLHandshakeException} not caused by I/O (etcd sent a fatal alert such as
   * bad_certificate). A handshake cut by a closed connection (an I/O cause) is etcd going away, not a refusal.
   */
  static boolean certificateRefused(Throwable t) {
    for (Throwable e = t; e != null && e != e.getCause(); e = e.getCause()) {
      if (e instanceof java.security.cert.CertificateException
          || e instanceof java.security.cert.CertPathValidatorException
          || e instanceof java.security.cert.CertPathBuilderException) {
        return true;
      }
      if (e instanceof javax.net.ssl.SSLHandshakeException && !(e.getCause() instanceof java.io.IOException)) {
        return true;
      }
    }
    return false;
  }

  /**
   * Whether etcd refused the token a call carried (UNAUTHENTICATED with no refused token request below it): the
   * token expired after {@code --auth-token-ttl} unused, or the member that answered does not know it (simple tokens
   * live in one member's memory, so a restart forgets them). A new token fixes it; the user is not refused.
   */
  static boolean tokenRefused(Throwable t) {
    Throwable e = unwrap(t);
    return code(e) == Status.Code.UNAUTHENTICATED && classify(e) == Kind.UNAVAILABLE;
  }

  /** Whether etcd refused a token because authentication is not enabled (credentials given to an open etcd). */
  static boolean authNotEnabled(Throwable t) {
    Throwable e = unwrap(t);
    return code(e) == Status.Code.UNAUTHENTICATED && causeCodes(e).contains(Status.Code.FAILED_PRECONDITION);
  }

  /** The status codes of the causes below {@code e}. */
  private static java.util.Set<Status.Code> causeCodes(Throwable e) {
    java.util.Set<Status.Code> codes = java.util.EnumSet.noneOf(Status.Code.class);
    for (Throwable c = e.getCause(); c != null && c != c.getCause(); c = c.getCause()) {
      Status.Code code = code(c);
      if (code != null) {
        codes.add(code);
      }
    }
    return codes;
  }

  /**
   * The one-line reason for a {@link Kind#DENIED} or {@link Kind#UNAUTHENTICATED} failure, naming who the client is
   * and, for a denial, what it tried and the permission it needs: e.g. {@code etcd user "pa" may not register
   * /muster/default/b/v1/x: it needs readwrite on /muster/default/b/ (permission denied)}.
   *
   * @param action what was tried, e.g. {@code "register /muster/default/b/v1/x"}
   * @param needed the permission that allows it, e.g. {@code "readwrite on /muster/default/b/"}
   */
  static String refusal(dev.muster.etcd.EtcdConfig config, Kind kind, String action, String needed,
      Throwable cause) {
    if (kind == Kind.DENIED) {
      return config.identity() + " may not " + action + ": it needs " + needed + " (etcd: permission denied)";
    }
    Throwable e = unwrap(cause);
    if (certificateRefused(e)) {
      String tls = "TLS: " + tlsCause(e).orElse("the handshake failed");
      return serverCertificateRefused(e)
          ? "etcd's certificate was not accepted (" + tls + "): check EtcdConfig's CA file and authority"
          : "etcd refused the TLS handshake (" + tls + "): check EtcdConfig's client certificate and key (given,"
              + " signed by the CA etcd trusts, not expired, the key matching the certificate)";
    }
    String who = config.identity();
    return (who.equals("no etcd user") ? "etcd requires authentication and no etcd user was given"
        : "etcd did not accept " + who) + " (" + refusalReason(e) + "): check EtcdConfig's credentials, or its"
        + " client certificate";
  }

  /** Whether this side refused etcd's certificate (a certificate or path exception), not etcd ours. */
  private static boolean serverCertificateRefused(Throwable t) {
    for (Throwable e = t; e != null && e != e.getCause(); e = e.getCause()) {
      if (e instanceof java.security.cert.CertificateException
          || e instanceof java.security.cert.CertPathValidatorException
          || e instanceof java.security.cert.CertPathBuilderException) {
        return true;
      }
    }
    return false;
  }

  /** etcd's own words for a refusal: the token request's status under gRPC's UNAUTHENTICATED. */
  private static String refusalReason(Throwable e) {
    Throwable reason = code(e) == Status.Code.UNAUTHENTICATED && e.getCause() != null && code(e.getCause()) != null
        ? e.getCause() : e;
    String m = reason.getMessage();
    return m == null || m.isBlank() ? reason.getClass().getSimpleName() : m.lines().findFirst().orElse("");
  }

  /** A refusal as the library's exception: {@link Kind#DENIED} or {@link Kind#UNAUTHENTICATED} only. */
  static dev.muster.AccessDeniedException accessDenied(dev.muster.etcd.EtcdConfig config, Kind kind, String action,
      String needed, Throwable cause) {
    return new dev.muster.AccessDeniedException(kind == Kind.DENIED ? dev.muster.ErrorCode.PERMISSION_DENIED
        : dev.muster.ErrorCode.AUTHENTICATION_FAILED, refusal(config, kind, action, needed, cause), cause);
  }

  /** The gRPC status code a failure carries, or null when it carries none. */
  private static Status.Code code(Throwable e) {
    if (e instanceof EtcdException ee) {
      return toGrpc(ee.getErrorCode());
    } else if (e instanceof StatusRuntimeException sre) {
      return sre.getStatus().getCode();
    } else if (e instanceof StatusException se) {
      return se.getStatus().getCode();
    }
    return null;
  }

  /** A short description of the failure for events and messages. */
  static String describe(Throwable t) {
    Throwable e = unwrap(t);
    if (e instanceof TimeoutException) {
      return "no answer within the request timeout";
    }
    String m = e.getMessage();
    String described = e.getClass().getSimpleName()
        + (m == null || m.isBlank() ? "" : ": " + m.lines().findFirst().orElse(""));
    return tlsCause(e).map(tls -> described + "; TLS: " + tls).orElse(described);
  }

  /**
   * Why a TLS handshake failed, found by type in the cause chain (gRPC reports only "UNAVAILABLE: ssl exception"
   * or "io exception"): the deepest SSL or certificate exception's message, e.g. "PKIX path building failed"
   * for a server certificate that the configured CA did not sign, or "bad_certificate" / "certificate_required"
   * when etcd refused ours.
   */
  static java.util.Optional<String> tlsCause(Throwable t) {
    String found = null;
    for (Throwable e = t; e != null && e != e.getCause(); e = e.getCause()) {
      if (e instanceof javax.net.ssl.SSLException || e instanceof java.security.cert.CertificateException
          || e instanceof java.security.GeneralSecurityException) {
        String m = e.getMessage();
        found = m == null || m.isBlank() ? e.getClass().getSimpleName() : m.lines().findFirst().orElse("");
      }
    }
    return java.util.Optional.ofNullable(found);
  }

  static Throwable unwrap(Throwable t) {
    Throwable e = t;
    while ((e instanceof ExecutionException || e instanceof CompletionException) && e.getCause() != null) {
      e = e.getCause();
    }
    return e;
  }

  private static Status.Code toGrpc(ErrorCode code) {
    try {
      return Status.Code.valueOf(code.name());
    } catch (IllegalArgumentException e) {
      return Status.Code.UNKNOWN;
    }
  }
}
