package dev.muster.cli;

import static org.awaitility.Awaitility.await;

import io.etcd.jetcd.ByteSequence;
import io.etcd.jetcd.Client;
import io.etcd.jetcd.Watch;
import io.etcd.jetcd.options.WatchOption;
import io.etcd.jetcd.watch.WatchEvent;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.CopyOnWriteArrayList;
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
  private final Watch.Watcher sentinelWatcher;
  private final Client client;
  private final ByteSequence sentinel = bytes("/cli-it/sentinel/" + UUID.randomUUID());
  private final List<Long> sentinelSeen = new CopyOnWriteArrayList<>();

  /**
   * Watches {@code key} from {@code fromRevision} and returns once the watch stream is known to be live: a second
   * watch, created after the first on the same stream, has delivered a put of a sentinel key outside the registry.
   */
  KeyWatch(Client client, String key, long fromRevision) throws Exception {
    this.client = client;
    this.watcher = client.getWatchClient().watch(bytes(key), WatchOption.builder().withRevision(fromRevision).build(),
        response -> {
          long now = System.nanoTime();
          for (WatchEvent e : response.getEvents()) {
            seen.add(new Seen(e.getEventType(), e.getKeyValue().getValue().toString(StandardCharsets.UTF_8),
                e.getKeyValue().getLease(), e.getKeyValue().getModRevision(), now));
          }
        });
    this.sentinelWatcher = client.getWatchClient().watch(sentinel,
        response -> sentinelSeen.add((long) response.getEvents().size()));
    client.getKVClient().put(sentinel, sentinel).get(10, TimeUnit.SECONDS);
    await("watch stream live").atMost(Duration.ofSeconds(10)).until(() -> !sentinelSeen.isEmpty());
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
    sentinelWatcher.close();
    client.getKVClient().delete(sentinel); // best effort; the key is outside the registry anyway
  }

  static ByteSequence bytes(String s) {
    return ByteSequence.from(s, StandardCharsets.UTF_8);
  }
}
