package dev.muster.etcd.internal;

import java.util.Map;
import java.util.concurrent.atomic.LongAdder;

/**
 * What the watch streams of one connection did, across its clients (for {@link EtcdConnection#stats()}): streams
 * opened, retired (a compacted watch or a refused create on them) and ended (broken, closed with their client, or
 * left empty once retired); creates and cancels written; creates etcd refused; watches failed by a stream's end;
 * watches moved off a retired stream; progress requests written, and of them those written again because the first
 * went unanswered; and the tokens the streams carried. Thread-safe:
 * the counters are {@link LongAdder}s, written by the streams and read at any time.
 */
final class WatchCounters {
  final LongAdder streams = new LongAdder();
  final LongAdder retired = new LongAdder();
  final LongAdder ended = new LongAdder();
  final LongAdder creates = new LongAdder();
  final LongAdder cancels = new LongAdder();
  final LongAdder refused = new LongAdder();
  final LongAdder failed = new LongAdder();
  final LongAdder moved = new LongAdder();
  final LongAdder progress = new LongAdder();
  final LongAdder progressResent = new LongAdder();
  final LongAdder tokens = new LongAdder();

  void addTo(Map<String, Long> stats) {
    stats.put("watch.streams", streams.sum());
    stats.put("watch.retired", retired.sum());
    stats.put("watch.ended", ended.sum());
    stats.put("watch.creates", creates.sum());
    stats.put("watch.cancels", cancels.sum());
    stats.put("watch.refused", refused.sum());
    stats.put("watch.failed", failed.sum());
    stats.put("watch.moved", moved.sum());
    stats.put("watch.progress", progress.sum());
    stats.put("watch.progress_resent", progressResent.sum());
    stats.put("watch.tokens", tokens.sum());
  }
}
