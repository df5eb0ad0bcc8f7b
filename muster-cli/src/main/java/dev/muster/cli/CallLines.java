package dev.muster.cli;

import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.io.PrintWriter;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.concurrent.atomic.AtomicLong;

/**
 * The per-call lines and the summary of {@code muster call} and {@code muster grpc-call}, and their counts: text
 * {@code #12 ok 200 via p2,p3 (14 ms)} and {@code N ok, N failed, N retried, N ejected}, or with {@code --json}
 * {@code {"event":"call",...}} and {@code {"event":"summary",...}} lines.
 *
 * <p>Thread-safe: calls complete on transport threads and the summary may be printed by a shutdown hook; the counts
 * are atomic and every line is printed whole under the writer's lock.
 */
final class CallLines {
  /**
   * One call's outcome. {@code status} is an HTTP status (an Integer, 0 when there was no response) or a gRPC
   * status code name; {@code attempts} the endpoints tried, in order (null when the call produced no result);
   * {@code messages} the replies of a stream, or null for a unary call.
   */
  record Outcome(boolean ok, Object status, List<String> attempts, boolean retried, boolean budgetRefused,
      String error, Long messages) {}

  private final PrintWriter out;
  private final String service;
  private final boolean json;
  private final boolean quiet;
  private final boolean attemptsVisible;
  private final AtomicLong ok = new AtomicLong();
  private final AtomicLong failed = new AtomicLong();
  private final AtomicLong retried = new AtomicLong();

  /**
   * @param attemptsVisible whether the caller sees each attempt (MusterClient does; a gRPC channel picks and ejects
   *     inside its policy, and only counts its attempts): when not, the summary leaves ejections and the budget out
   *     rather than print 0
   */
  CallLines(PrintWriter out, String service, boolean json, boolean quiet, boolean attemptsVisible) {
    this.out = out;
    this.service = service;
    this.json = json;
    this.quiet = quiet;
    this.attemptsVisible = attemptsVisible;
  }

  long failed() {
    return failed.get();
  }

  /** Counts the call and, unless quiet, prints its line. */
  void call(long seq, Instant started, Duration took, Outcome o) {
    (o.ok() ? ok : failed).incrementAndGet();
    if (o.retried()) {
      retried.incrementAndGet();
    }
    if (quiet) {
      return;
    }
    boolean noStatus = o.status() == null || Integer.valueOf(0).equals(o.status());
    if (json) {
      ObjectNode node = JsonLines.event("call", started);
      node.put("service", service);
      node.put("seq", seq);
      node.put("ok", o.ok());
      if (o.status() instanceof Integer code) {
        node.put("status", code);
      } else {
        node.put("status", o.status() == null ? null : o.status().toString());
      }
      node.put("latency_us", took.toNanos() / 1000);
      ArrayNode tried = node.putArray("attempts");
      if (o.attempts() != null) {
        o.attempts().forEach(tried::add);
        node.put("retried", o.retried());
        node.put("budget_refused", o.budgetRefused());
      }
      if (o.messages() != null) {
        node.put("messages", o.messages());
      }
      if (o.error() != null) {
        node.put("error", o.error());
      }
      JsonLines.print(out, node);
    } else {
      synchronized (out) {
        out.printf("#%d %s %s via %s (%d ms)%s%s%n", seq, o.ok() ? "ok" : "FAILED", noStatus ? "-" : o.status(),
            o.attempts() == null || o.attempts().isEmpty() ? "-" : String.join(",", o.attempts()), took.toMillis(),
            o.messages() == null ? "" : " " + o.messages() + " messages",
            o.error() == null || o.ok() ? "" : " " + o.error());
        out.flush();
      }
    }
  }

  /** The summary; without visible attempts {@code ejected} and {@code budgetRefused} are ignored. */
  void summary(long ejected, long budgetRefused) {
    if (json) {
      ObjectNode node = JsonLines.event("summary", Instant.now());
      node.put("service", service);
      node.put("ok", ok.get());
      node.put("failed", failed.get());
      node.put("retried", retried.get());
      if (attemptsVisible) {
        node.put("ejected", ejected);
        node.put("budget_refused", budgetRefused);
      }
      JsonLines.print(out, node);
    } else {
      synchronized (out) {
        if (attemptsVisible) {
          out.printf("%d ok, %d failed, %d retried, %d ejected%s%n", ok.get(), failed.get(), retried.get(), ejected,
              budgetRefused == 0 ? "" : ", " + budgetRefused + " retries refused by the budget");
        } else {
          out.printf("%d ok, %d failed, %d retried%n", ok.get(), failed.get(), retried.get());
        }
        out.flush();
      }
    }
  }

  /** {@code SimpleName: message}, the error text of a failed call's line. */
  static String error(Throwable failure) {
    return failure.getClass().getSimpleName() + (failure.getMessage() == null ? "" : ": " + failure.getMessage());
  }
}
