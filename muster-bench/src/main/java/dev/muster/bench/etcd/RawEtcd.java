package dev.muster.bench.etcd;

import dev.muster.bench.support.BenchException;
import io.etcd.jetcd.ByteSequence;
import io.etcd.jetcd.Client;
import io.etcd.jetcd.Watch;
import io.etcd.jetcd.kv.GetResponse;
import io.etcd.jetcd.op.Op;
import io.etcd.jetcd.options.GetOption;
import io.etcd.jetcd.options.PutOption;
import io.etcd.jetcd.options.WatchOption;
import io.etcd.jetcd.watch.WatchEvent;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.function.BiConsumer;

/**
 * The physical floor: plain jetcd, no Muster code. A put, a revoke, a prefix watcher and a paged range, done the
 * way anyone would with the official client; the end-to-end rows divide Muster's figures by these.
 *
 * <p>Stateless helpers; the jetcd {@link Client} passed in is thread-safe. Public for the sections that fill etcd
 * with many instances at once ({@link #putAll}).
 */
public final class RawEtcd {
  static final long CALL_SECONDS = 10;
  /** Puts per transaction in {@link #putAll}: etcd allows 128 operations per transaction by default. */
  private static final int TXN_OPS = 100;

  private RawEtcd() {}

  public static Client client(String endpoints) {
    return Client.builder().endpoints(endpoints.split(",")).build();
  }

  static ByteSequence bytes(String s) {
    return ByteSequence.from(s, StandardCharsets.UTF_8);
  }

  /**
   * Puts {@code values[i]} at {@code keys[i]} for every i, without a lease, {@value #TXN_OPS} puts per transaction,
   * one transaction after the other: 10,000 keys take a second or two.
   */
  public static void putAll(Client client, String[] keys, byte[][] values) {
    if (keys.length != values.length) {
      throw new IllegalArgumentException(keys.length + " keys for " + values.length + " values");
    }
    for (int from = 0; from < keys.length; from += TXN_OPS) {
      Op[] puts = new Op[Math.min(TXN_OPS, keys.length - from)];
      for (int j = 0; j < puts.length; j++) {
        puts[j] = Op.put(bytes(keys[from + j]), ByteSequence.from(values[from + j]), PutOption.DEFAULT);
      }
      await("fill transaction", client.getKVClient().txn().Then(puts).commit());
    }
  }

  static <T> T await(String what, CompletableFuture<T> call) {
    try {
      return call.get(CALL_SECONDS, TimeUnit.SECONDS);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new BenchException("interrupted during " + what);
    } catch (ExecutionException | TimeoutException e) {
      throw new BenchException(what + " failed: " + e, e);
    }
  }

  /** The smallest key after every key starting with {@code prefix} (etcd's range end for a prefix). */
  static ByteSequence prefixEnd(String prefix) {
    byte[] end = prefix.getBytes(StandardCharsets.UTF_8);
    end = Arrays.copyOf(end, end.length);
    end[end.length - 1]++;
    return ByteSequence.from(end);
  }

  /**
   * Watches every key under {@code prefix} from now; {@code onEvent} gets (key, is-put) for each event, on
   * jetcd's executor. Returns once etcd has acknowledged the watch: jetcd sends the create request
   * asynchronously, and a write made before it arrives would never be seen by a watch "from now".
   */
  static Watch.Watcher watchPrefix(Client client, String prefix, BiConsumer<String, Boolean> onEvent) {
    WatchOption option = WatchOption.builder().withRange(prefixEnd(prefix)).withCreateNotify(true).build();
    CountDownLatch created = new CountDownLatch(1);
    Watch.Watcher w = client.getWatchClient().watch(bytes(prefix), option, response -> {
      if (response.isCreatedNotify()) {
        created.countDown();
      }
      for (WatchEvent e : response.getEvents()) {
        onEvent.accept(e.getKeyValue().getKey().toString(StandardCharsets.UTF_8),
            e.getEventType() == WatchEvent.EventType.PUT);
      }
    });
    try {
      if (!created.await(30, TimeUnit.SECONDS)) {
        w.close();
        throw new BenchException("etcd did not acknowledge a watch on " + prefix + " within 30 s");
      }
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      w.close();
      throw new BenchException("interrupted while waiting for a watch on " + prefix);
    }
    return w;
  }

  /**
   * Reads every key under {@code prefix} in pages of {@code pageSize}, all pinned to the first page's revision
   * (what a consumer must do for a consistent snapshot). Returns the number of keys read.
   */
  static int rangeAll(Client client, String prefix, int pageSize) {
    ByteSequence end = prefixEnd(prefix);
    ByteSequence from = bytes(prefix);
    long revision = 0;
    int keys = 0;
    while (true) {
      GetOption.Builder option = GetOption.builder().withRange(end).withLimit(pageSize)
          .withSortField(GetOption.SortTarget.KEY).withSortOrder(GetOption.SortOrder.ASCEND);
      if (revision != 0) {
        option.withRevision(revision);
      }
      GetResponse page = await("range " + prefix, client.getKVClient().get(from, option.build()));
      if (revision == 0) {
        revision = page.getHeader().getRevision();
      }
      keys += page.getKvs().size();
      if (!page.isMore() || page.getKvs().isEmpty()) {
        return keys;
      }
      byte[] last = page.getKvs().get(page.getKvs().size() - 1).getKey().getBytes();
      from = ByteSequence.from(Arrays.copyOf(last, last.length + 1));
    }
  }
}
