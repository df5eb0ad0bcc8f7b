package dev.muster.bench;

import dev.muster.cache.EndpointDelta;
import dev.muster.cache.internal.CacheRecord;
import dev.muster.cache.internal.RevisionApplier;
import dev.muster.registry.Instance;
import dev.muster.registry.InstanceCodec;
import dev.muster.registry.RegistryLayout;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;

/**
 * Measures {@link RevisionApplier#apply} of one revision to a view already holding {@code size} instances, in ns/op:
 * {@link #onePut} is a revision with one PUT that changes one instance, {@link #transactionOf100} a revision
 * with 100 PUTs (one etcd transaction) that each change a different instance.
 *
 * <p>Why: the issue "applying must cost O(changed), not O(set size)". Read the two sizes side by side: if apply
 * is O(changed), each method costs about the same at 100 and at 10,000 instances; if it grows with the size, so
 * does every watch event of a large service. {@code EndpointSet} is now a persistent tree map and apply costs
 * O(changed × log n): each changed key copies the tree nodes on its path (about 7 at 100 instances, 14 at 10,000)
 * and shares the rest with the previous set. So expect each method to cost about the same at 100 and at 10,000,
 * in ns/op (at most a log n rise) and in {@code -prof gc}'s {@code gc.alloc.rate.norm} (bytes allocated per
 * revision), which the deeper path raises by only a few hundred bytes per changed key; most of it is building and
 * decoding the records, about 12 KB per PUT when this was written. The implementation this was first written
 * against copied the whole map for every revision, and {@link #onePut} allocated about 16 KB at 100 and 397 KB at
 * 10,000.
 *
 * <p>How: the view is filled once per trial with {@link RevisionApplier#replace} (not measured). Each call then
 * applies the next revision of a counter kept in the state, so no call is skipped as a replay, and each PUT
 * alternates its instance's weight between 100 and 50, so every event is a real change and the delta is never
 * empty. Instances are changed round robin, so one transaction never touches a key twice. Each op includes what
 * a watch response costs per revision anyway: building its {@link CacheRecord}s and decoding each PUT's value
 * (the SPEC §2 example, see {@link DecodeBenchmark}). The view is single-threaded, so the state is per thread.
 */
@State(Scope.Thread)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.NANOSECONDS)
public class ApplyBenchmark {
  private static final RegistryLayout LAYOUT = RegistryLayout.defaults();
  private static final int TRANSACTION_EVENTS = 100;
  private static final int CHANGED_WEIGHT = 50;

  /** Instances in the view before each revision (the set's size does not change while measuring). */
  @Param({"100", "10000"})
  int size;

  private RevisionApplier view;
  private String[] keys;
  private byte[][] originalValues;
  private byte[][] changedValues;
  private boolean[] holdsChanged;
  private long revision;
  private int nextInstance;

  @Setup(Level.Trial)
  public void fillView() {
    if (size < TRANSACTION_EVENTS) {
      throw new IllegalStateException("size " + size + " is below " + TRANSACTION_EVENTS
          + ": a transaction would touch one key twice");
    }
    keys = new String[size];
    originalValues = new byte[size][];
    changedValues = new byte[size][];
    holdsChanged = new boolean[size];
    revision = 1;
    List<CacheRecord> snapshot = new ArrayList<>(size);
    for (int i = 0; i < size; i++) {
      Instance instance = SpecExample.number(i);
      keys[i] = LAYOUT.instanceKey(instance);
      originalValues[i] = InstanceCodec.encode(instance);
      changedValues[i] = InstanceCodec.encode(instance.weight(CHANGED_WEIGHT));
      snapshot.add(CacheRecord.put(keys[i], originalValues[i], revision));
    }
    view = new RevisionApplier(LAYOUT, LAYOUT.servicePrefix(Instance.DEFAULT_NAMESPACE, SpecExample.SERVICE));
    view.replace(revision, snapshot, EndpointDelta.Kind.SNAPSHOT);
    if (view.current().size() != size) {
      throw new IllegalStateException("the view holds " + view.current().size() + " instances, not " + size);
    }
  }

  @Benchmark
  public RevisionApplier.Publication onePut() {
    long r = ++revision;
    return view.apply(r, List.of(nextChange(r))).orElseThrow();
  }

  @Benchmark
  public RevisionApplier.Publication transactionOf100() {
    long r = ++revision;
    List<CacheRecord> events = new ArrayList<>(TRANSACTION_EVENTS);
    for (int i = 0; i < TRANSACTION_EVENTS; i++) {
      events.add(nextChange(r));
    }
    return view.apply(r, events).orElseThrow();
  }

  /** A PUT at revision {@code r} that flips the next instance's weight. */
  private CacheRecord nextChange(long r) {
    int i = nextInstance;
    nextInstance = i + 1 == size ? 0 : i + 1;
    holdsChanged[i] = !holdsChanged[i];
    return CacheRecord.put(keys[i], holdsChanged[i] ? changedValues[i] : originalValues[i], r);
  }
}
