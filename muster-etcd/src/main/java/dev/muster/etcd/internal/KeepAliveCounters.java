package dev.muster.etcd.internal;

import java.util.Map;
import java.util.concurrent.atomic.LongAdder;

/**
 * What the keepalive streams of one connection did, across its clients (for {@link EtcdConnection#stats()}): streams
 * opened and ended (broken, or closed with their client), keepalives sent and answered, keepalives failed by a
 * stream's end (waiting on it, or sent to it as it ended) and those of them sent once more on a new stream, and the
 * tokens the streams carried (jetcd's or their own; a new one each time etcd refused the last). Thread-safe: the
 * counters are {@link LongAdder}s, written by the streams and read at any time.
 */
final class KeepAliveCounters {
  final LongAdder streams = new LongAdder();
  final LongAdder sent = new LongAdder();
  final LongAdder answered = new LongAdder();
  final LongAdder ended = new LongAdder();
  final LongAdder failed = new LongAdder();
  final LongAdder resent = new LongAdder();
  final LongAdder tokens = new LongAdder();

  void addTo(Map<String, Long> stats) {
    stats.put("keepalive.streams", streams.sum());
    stats.put("keepalive.sent", sent.sum());
    stats.put("keepalive.answered", answered.sum());
    stats.put("keepalive.ended", ended.sum());
    stats.put("keepalive.failed", failed.sum());
    stats.put("keepalive.resent", resent.sum());
    stats.put("keepalive.tokens", tokens.sum());
  }
}
