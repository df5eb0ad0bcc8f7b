package dev.muster.etcd;

import dev.muster.cache.EndpointDelta;
import dev.muster.cache.EndpointListener;
import dev.muster.cache.EndpointSet;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;

/** A cache listener that writes what it hears as lines: {@code UPDATE@12}, {@code stale: why}, {@code recovered ...},
 * {@code FAILED: why}. */
final class ChangeLog implements EndpointListener {
  private final List<String> lines = new CopyOnWriteArrayList<>();

  @Override
  public void onChange(EndpointSet set, EndpointDelta delta) {
    lines.add(delta.kind() + "@" + set.revision());
  }

  @Override
  public void onStale(EndpointSet set, Instant since, String reason) {
    lines.add("stale: " + reason);
  }

  @Override
  public void onRecovered(EndpointSet set, Duration staleFor) {
    lines.add("recovered after " + staleFor.toMillis() + " ms");
  }

  @Override
  public void onFailed(EndpointSet set, dev.muster.MusterException why) {
    lines.add("FAILED: " + why.getMessage());
  }

  List<String> lines() {
    return List.copyOf(lines);
  }

  @Override
  public String toString() {
    return lines.toString();
  }
}
