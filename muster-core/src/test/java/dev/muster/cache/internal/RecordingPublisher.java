package dev.muster.cache.internal;

import dev.muster.cache.EndpointDelta;
import dev.muster.cache.EndpointSet;
import dev.muster.cache.Endpoints;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;

/** A {@link CacheDriver.Publisher} that keeps everything it is given and writes a line per call to the journal. */
final class RecordingPublisher implements CacheDriver.Publisher {
  record Published(EndpointSet set, EndpointDelta delta) {}

  record Stale(EndpointSet set, Instant since, String reason) {}

  record Recovered(EndpointSet set, Duration staleFor) {}

  record Held(EndpointSet kept, int wouldRemove, Duration holdFor) {}

  final List<Published> published = new ArrayList<>();
  final List<Stale> stale = new ArrayList<>();
  final List<Recovered> recovered = new ArrayList<>();
  final List<Held> held = new ArrayList<>();
  final List<dev.muster.MusterException> failed = new ArrayList<>();
  private final List<String> journal;

  RecordingPublisher(List<String> journal) {
    this.journal = journal;
  }

  @Override
  public void publish(EndpointSet set, EndpointDelta delta) {
    published.add(new Published(set, delta));
    journal.add("publish " + delta.kind() + " at " + set.revision() + " " + Endpoints.ids(set));
  }

  @Override
  public void stale(EndpointSet set, Instant since, String reason) {
    stale.add(new Stale(set, since, reason));
    journal.add("stale");
  }

  @Override
  public void recovered(EndpointSet set, Duration staleFor) {
    recovered.add(new Recovered(set, staleFor));
    journal.add("recovered");
  }

  @Override
  public void held(EndpointSet kept, int wouldRemove, Duration holdFor) {
    held.add(new Held(kept, wouldRemove, holdFor));
    journal.add("held " + wouldRemove);
  }

  @Override
  public void failed(EndpointSet set, dev.muster.MusterException why) {
    failed.add(why);
    journal.add("failed at " + set.revision());
  }

  Published last() {
    if (published.isEmpty()) {
      throw new AssertionError("nothing was published");
    }
    return published.get(published.size() - 1);
  }
}
