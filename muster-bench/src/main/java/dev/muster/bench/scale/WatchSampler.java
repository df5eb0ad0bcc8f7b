package dev.muster.bench.scale;

import dev.muster.bench.support.BenchException;
import dev.muster.bench.support.EtcdMetrics;
import java.net.URI;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

/**
 * Reads etcd's Watch counters ({@link EtcdMetrics#watch}) from every member's {@code /metrics} every {@link #PERIOD}
 * on a daemon thread, from construction until {@link #close()}, as {@link WatchLoad.Reading}s: the counts added since
 * the first reading, summed over the members.
 *
 * <p>A member that does not answer a reading keeps its last count. etcd's counters live in its process, so a member
 * the bench has SIGKILLed ({@link #killed}) counts from zero when it answers again, on top of what it had counted
 * before. A reading of the old process that was under way when the kill was announced is dropped, so the new
 * process's zero is never mistaken for the old one's total.
 *
 * <p>Thread-safe: the sampling thread and the measuring thread ({@link #killed}, {@link #readings}) share the state
 * under this object's monitor; no HTTP request is made under it.
 */
final class WatchSampler implements AutoCloseable {
  /**
   * How often etcd is read. A reading costs etcd about 5 ms of CPU (it renders all its metrics, some 160 kB; 100
   * readings of an idle 3.5.30 took 0.48 s), so every 200 ms it adds about 0.025 cores to the storm's.
   */
  static final Duration PERIOD = Duration.ofMillis(200);
  private static final Duration TIMEOUT = Duration.ofSeconds(1);

  private final List<URI> members;
  private final Member[] state;
  private final List<WatchLoad.Reading> readings = new ArrayList<>();
  private final Thread thread;
  private volatile boolean stop;

  /** One member's counts: {@code total} = what earlier processes counted + this process's count − its base. */
  private static final class Member {
    long generation; // announced kills: a reading started in an older generation is dropped
    boolean known; // this process has been read at least once
    boolean fresh; // this process started after a kill: it counts from zero
    long baseMessages;
    long baseStreams;
    long earlierMessages;
    long earlierStreams;
    long messages; // this process's last reading
    long streams;

    long totalMessages() {
      return known ? earlierMessages + messages - baseMessages : earlierMessages;
    }

    long totalStreams() {
      return known ? earlierStreams + streams - baseStreams : earlierStreams;
    }
  }

  /** Reads every member once now (the base: what they counted before), then every {@link #PERIOD}. */
  WatchSampler(List<URI> clientUrls) {
    this.members = List.copyOf(clientUrls);
    this.state = new Member[members.size()];
    for (int i = 0; i < state.length; i++) {
      state[i] = new Member();
    }
    readAll();
    this.thread = new Thread(() -> {
      while (!stop) {
        try {
          Thread.sleep(PERIOD.toMillis());
        } catch (InterruptedException e) {
          return;
        }
        readAll();
      }
    }, "bench-watch-sampler");
    thread.setDaemon(true);
    thread.start();
  }

  /** The member at {@code clientUrl} was SIGKILLed: its next process counts from zero. Call after the kill. */
  synchronized void killed(URI clientUrl) {
    int i = members.indexOf(clientUrl);
    if (i < 0) {
      throw new IllegalArgumentException(clientUrl + " is not one of the sampled members " + members);
    }
    Member m = state[i];
    m.earlierMessages = m.totalMessages();
    m.earlierStreams = m.totalStreams();
    m.known = false;
    m.fresh = true;
    m.generation++;
  }

  /** The readings so far, in time order. */
  synchronized List<WatchLoad.Reading> readings() {
    return List.copyOf(readings);
  }

  private void readAll() {
    for (int i = 0; i < members.size(); i++) {
      long generation;
      synchronized (this) {
        generation = state[i].generation;
      }
      EtcdMetrics.WatchCounts counts;
      try {
        counts = EtcdMetrics.watch(members.get(i), TIMEOUT);
      } catch (BenchException e) {
        continue; // down, restarting or too busy to answer in time: it keeps its last count
      }
      synchronized (this) {
        Member m = state[i];
        if (m.generation != generation) {
          continue; // read from the process that was killed meanwhile
        }
        if (!m.known) {
          m.baseMessages = m.fresh ? 0 : counts.messages();
          m.baseStreams = m.fresh ? 0 : counts.streams();
          m.known = true;
        }
        m.messages = counts.messages();
        m.streams = counts.streams();
      }
    }
    synchronized (this) {
      long messages = 0;
      long streams = 0;
      for (Member m : state) {
        messages += m.totalMessages();
        streams += m.totalStreams();
      }
      readings.add(new WatchLoad.Reading(ScaleWatchers.epochMicros(), messages, streams));
    }
  }

  @Override
  public void close() {
    stop = true;
    thread.interrupt();
    try {
      thread.join(TIMEOUT.toMillis() * (members.size() + 1));
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
  }
}
