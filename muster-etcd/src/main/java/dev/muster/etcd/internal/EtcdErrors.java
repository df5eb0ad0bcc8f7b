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
    /** Anything else: a bug or a refusal that retrying will not fix. */
    OTHER
  }

  private EtcdErrors() {}

  static Kind classify(Throwable t) {
    Throwable e = unwrap(t);
    if (e instanceof TimeoutException || e instanceof CancellationException || e instanceof java.io.IOException) {
      return Kind.UNAVAILABLE;
    }
    Status.Code code = code(e);
    if (code == null) {
      return Kind.OTHER;
    }
    return switch (code) {
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
