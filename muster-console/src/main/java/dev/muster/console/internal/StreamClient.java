package dev.muster.console.internal;

import java.io.IOException;
import java.io.OutputStream;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.concurrent.ArrayBlockingQueue;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.TimeUnit;

/**
 * One browser's event stream: a bounded queue the pump fills and the client's HTTP thread drains onto the socket.
 * A browser that reads too slowly fills its queue and is dropped (its EventSource reconnects and starts afresh); it
 * never blocks the pump or other browsers.
 *
 * <p>Threading: {@link #offer} from the pump thread, {@link #serve} on the client's own HTTP thread; the queue is
 * the only thing they share, {@code closed} is volatile. {@code lastState} and {@code lastSeq} are the pump's.
 */
final class StreamClient {
  static final int QUEUE = 64;
  private static final Duration KEEPALIVE = Duration.ofSeconds(15);

  /** What the page shows: {@code overview}, {@code service} (of namespace/service), {@code events}, {@code cluster}. */
  record View(String page, String namespace, String service) {
    String key() {
      return page.equals("service") ? "service:" + namespace + "/" + service : page;
    }
  }

  private final View view;
  private final BlockingQueue<String> queue = new ArrayBlockingQueue<>(QUEUE);
  private volatile boolean closed;
  String lastState; // pump thread only
  long lastSeq; // pump thread only

  StreamClient(View view) {
    this.view = view;
  }

  View view() {
    return view;
  }

  boolean isClosed() {
    return closed;
  }

  /** Queues one SSE message; a full queue closes the client instead of waiting. */
  void offer(String event, String data) {
    if (!closed && !queue.offer("event: " + event + "\ndata: " + data + "\n\n")) {
      closed = true;
    }
  }

  void close() {
    closed = true;
  }

  /** Writes queued messages to {@code out} until the client closes or the browser goes. */
  void serve(OutputStream out) throws IOException, InterruptedException {
    out.write(("retry: 1000\n\n").getBytes(StandardCharsets.UTF_8));
    out.flush();
    while (!closed) {
      String message = queue.poll(KEEPALIVE.toMillis(), TimeUnit.MILLISECONDS);
      if (closed) {
        return;
      }
      out.write((message == null ? ": keepalive\n\n" : message).getBytes(StandardCharsets.UTF_8));
      out.flush();
    }
  }
}
