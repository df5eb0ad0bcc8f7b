package dev.muster.cli;

import io.etcd.jetcd.ByteSequence;
import io.etcd.jetcd.Client;
import io.etcd.jetcd.Watch;
import io.etcd.jetcd.options.WatchOption;
import io.etcd.jetcd.watch.WatchEvent;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;

/**
 * A jetcd watch on one key that records every event with the {@link System#nanoTime()} it arrived at, so an IT can
 * check their order and measure delays. Events are appended on jetcd's thread; readers get copies.
 */
final class KeyWatch implements AutoCloseable {
  /** One event as the watch saw it; {@code value} is empty for a DELETE. */
  record Seen(WatchEvent.EventType type, String value, long lease, long revision, long nanos) {}

  private final List<Seen> seen = new CopyOnWriteArrayList<>();
  private final Watch.Watcher watcher;
  private final CountDownLatch created = new CountDownLatch(1);

  /**
   * Watches {@code key} from {@code fromRevision} and returns once etcd has acknowledged the watch (its created
   * notification). jetcd sends the create request asynchronously, so it is not live when {@code watch()} returns;
   * the explicit start revision means no event is missed either way. (This used to wait for a second, sentinel
   * watch "from now" to see a put made right after it was requested; when that watch reached etcd after the put it
   * never saw it, and a fresh clone's suite failed once on it.)
   */
  KeyWatch(Client client, String key, long fromRevision) throws Exception {
    this.watcher = client.getWatchClient().watch(bytes(key), WatchOption.builder().withRevision(fromRevision)
        .withCreateNotify(true).build(), response -> {
          long now = System.nanoTime();
          if (response.isCreatedNotify()) {
            created.countDown();
          }
          for (WatchEvent e : response.getEvents()) {
            seen.add(new Seen(e.getEventType(), e.getKeyValue().getValue().toString(StandardCharsets.UTF_8),
                e.getKeyValue().getLease(), e.getKeyValue().getModRevision(), now));
          }
        });
    if (!created.await(10, TimeUnit.SECONDS)) {
      watcher.close();
      throw new IllegalStateException("etcd did not acknowledge the watch on " + key + " within 10 s");
    }
  }

  List<Seen> seen() {
    return List.copyOf(seen);
  }

  /** The first event of {@code type}, or null. */
  Seen first(WatchEvent.EventType type) {
    return seen.stream().filter(s -> s.type() == type).findFirst().orElse(null);
  }

  @Override
  public void close() {
    watcher.close();
  }

  static ByteSequence bytes(String s) {
    return ByteSequence.from(s, StandardCharsets.UTF_8);
  }
}
