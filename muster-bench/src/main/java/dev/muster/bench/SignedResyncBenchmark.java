package dev.muster.bench;

import dev.muster.cache.EndpointDelta;
import dev.muster.cache.internal.CacheRecord;
import dev.muster.cache.internal.RevisionApplier;
import dev.muster.registry.Instance;
import dev.muster.registry.InstanceCodec;
import dev.muster.registry.RegistryLayout;
import dev.muster.sign.SigningKey;
import dev.muster.sign.TrustedKeys;
import java.time.Instant;
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
 * 10,000 records, signed against unsigned (issue 35: a signed resync within 1.5x an unsigned one):
 * <ul>
 *   <li>{@link #firstSet}: {@link RevisionApplier#replace} on a fresh applier, so every signature is checked (side by
 *       side: {@code SignedRecords.checkAhead});
 *   <li>{@link #resync}: the same records again, at a new revision, on an applier that holds them (what a cache does
 *       after a compaction or a reconnect): a record unchanged since it verified is not checked again;
 *   <li>{@link #events}: {@value #EVENTS} watched PUTs applied one revision each to an applier holding the set (each
 *       signed PUT is checked: divide by {@value #EVENTS} for one event).
 * </ul>
 * What etcd's paged range adds is the same either way and is not here; this is the part signing changes. In ms per
 * set, one shot each.
 */
@State(Scope.Benchmark)
@BenchmarkMode(Mode.SingleShotTime)
@OutputTimeUnit(TimeUnit.MILLISECONDS)
public class SignedResyncBenchmark {
  private static final int SIZE = 10_000;
  private static final int EVENTS = 1_000;
  private static final RegistryLayout LAYOUT = RegistryLayout.defaults();
  private static final String SERVICE = "orders";

  @Param({"false", "true"})
  public boolean signed;

  private List<CacheRecord> records;
  private List<CacheRecord> updates;
  private TrustedKeys trust;
  private RevisionApplier applier;

  @Setup(Level.Trial)
  public void records() {
    SigningKey key = SigningKey.generate();
    trust = signed ? TrustedKeys.builder().service("default", SERVICE, key.trustedKey()).build() : TrustedKeys.NONE;
    Instant notAfter = Instant.now().plusSeconds(3600);
    records = new ArrayList<>(SIZE);
    for (int i = 0; i < SIZE; i++) {
      Instance instance = Instance.of(SERVICE, "10.0." + (i / 250) + "." + (i % 250 + 1), 8080).id("i" + i)
          .zone("z" + (i % 3)).meta("build", "42");
      String k = LAYOUT.instanceKey(instance);
      long lease = 1_000 + i;
      byte[] value = signed ? InstanceCodec.encodeSigned(instance, k, lease, i + 1, notAfter, key, false)
          : InstanceCodec.encode(instance);
      records.add(CacheRecord.put(k, value, 5 + i, lease));
    }
    updates = new ArrayList<>(EVENTS);
    for (int i = 0; i < EVENTS; i++) { // a weight changed, signed again with a higher sequence
      Instance instance = Instance.of(SERVICE, "10.0." + (i / 250) + "." + (i % 250 + 1), 8080).id("i" + i)
          .zone("z" + (i % 3)).meta("build", "42").weight(50);
      String k = LAYOUT.instanceKey(instance);
      long lease = 1_000 + i;
      byte[] value = signed ? InstanceCodec.encodeSigned(instance, k, lease, SIZE + 1 + i, notAfter, key, false)
          : InstanceCodec.encode(instance);
      updates.add(CacheRecord.put(k, value, SIZE + 100 + i, lease));
    }
  }

  @Setup(Level.Invocation)
  public void freshApplier() {
    applier = new RevisionApplier(LAYOUT, LAYOUT.servicePrefix("default", SERVICE), trust);
  }

  @Benchmark
  public int firstSet() {
    return served(applier.replace(SIZE + 10, records, EndpointDelta.Kind.SNAPSHOT).set().size());
  }

  /** An applier that holds the 10,000 records already (its first set applied before each shot). */
  @State(Scope.Benchmark)
  public static class Held {
    RevisionApplier applier;

    @Setup(Level.Invocation)
    public void hold(SignedResyncBenchmark bench) {
      applier = new RevisionApplier(LAYOUT, LAYOUT.servicePrefix("default", SERVICE), bench.trust);
      served(applier.replace(SIZE + 10, bench.records, EndpointDelta.Kind.SNAPSHOT).set().size());
    }
  }

  @Benchmark
  public int resync(Held held) {
    return served(held.applier.replace(SIZE + 20, records, EndpointDelta.Kind.RESYNC).set().size());
  }

  @Benchmark
  public long events(Held held) {
    long changed = 0;
    for (CacheRecord u : updates) {
      changed += held.applier.apply(u.modRevision(), List.of(u)).orElseThrow().delta().changed().size();
    }
    if (changed != EVENTS) {
      throw new IllegalStateException(changed + " of " + EVENTS + " events changed an instance");
    }
    return changed;
  }

  private static int served(int size) {
    if (size != SIZE) {
      throw new IllegalStateException(size + " of " + SIZE + " records served");
    }
    return size;
  }
}
