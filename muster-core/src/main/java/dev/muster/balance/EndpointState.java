package dev.muster.balance;

import dev.muster.outlier.OutlierState;
import dev.muster.registry.Instance;
import dev.muster.registry.InstanceKey;
import dev.muster.registry.InstanceState;
import java.time.Duration;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.LongSupplier;

/*
 * The latency EWMA is a time-weighted mean: a sample of age t weighs exp(-t / decay) against a new one's 1. It is kept
 * as three doubles, each as bits in an AtomicLong: the evidence W (the sum of those weights), the mean, and the mean
 * squared log deviation of a sample from the mean before it (the spread). A sample claims the interval since the
 * previous one with getAndSet on the stamp, so concurrent samples decay W by disjoint intervals; W' = W * w + 1 is
 * folded in with a CAS loop, then the mean moves by (sample - mean) / W' and the spread by (d^2 - spread) / W', each
 * with its own CAS loop. Two concurrent samples may fold in either order or interleave between the three, a
 * difference far below the noise of latency itself. The mean starts at NO_SAMPLE, so a pick that races the very
 * first sample sees no sample rather than a mean of 0.
 *
 * Why W and not the classic ewma = ewma * w + sample * (1 - w) (issue 34, item 6): that form gives the first sample
 * a weight of 1, as if it stood for an infinitely long history, so for a whole decay period (10 s) the EWMA hardly
 * leaves the first sample: with calls 1 ms apart, each later sample weighs 1 - exp(-1 ms / 10 s), about 1e-4. Two
 * equal endpoints then kept the two different values of their first answers, and power of two sent every call to the
 * lower one. Divided by W, the first samples are averaged (the k-th of k samples close together weighs about 1/k);
 * once samples have arrived for several decay periods at a steady rate, W' = 1 / (1 - w) and the two forms agree.
 */
/**
 * What the balancer knows about one endpoint: the latest {@link Instance}, the attempts in flight, a latency EWMA and
 * the {@linkplain OutlierState ejection state}. One per {@link InstanceKey}, kept across set updates for as long as
 * the key stays in the set, so load and ejection survive a re-registration that only changed the value.
 *
 * <p>Thread-safe and lock-free. {@link #started()} and {@link #finished(Duration)} are called by the call engine on
 * whatever thread runs or completes an attempt; each {@code started()} is matched by exactly one {@code finished}.
 */
public final class EndpointState {
  private static final long NO_SAMPLE = Double.doubleToRawLongBits(-1.0);
  /**
   * The spread of {@code ln(latency)} assumed before an endpoint has shown its own: about ±50 %, a single latency
   * sample being weak evidence (a cold connection, a pause).
   */
  static final double PRIOR_LOG_SPREAD = 0.5;
  /** How many samples' worth that assumed spread counts for against the measured one. */
  static final double PRIOR_WEIGHT = 2.0;
  /**
   * The most evidence an estimate holds: {@value} samples' worth, however many arrived within a decay period.
   * Latency is not stationary (the machine's load, the provider's GC, the network all move), so a thousand samples of
   * the last ten seconds say no more about the next call than twenty do; an uncapped W made two equally fast
   * endpoints' estimates, taken at different moments, look different beyond their noise, and power of two then sent
   * every sequential call to one of them (the conformance suite's slow-start check saw a recovered endpoint get no
   * call for 15 s). Capped, a difference under about a fifth of the latency is a tie.
   */
  static final double MAX_EVIDENCE = 20.0;

  private final InstanceKey key;
  private final LongSupplier nanoTime;
  private final double decayNanos;
  private final OutlierState outlier = new OutlierState();
  private final AtomicInteger inFlight = new AtomicInteger();
  private final AtomicLong ewmaBits = new AtomicLong(NO_SAMPLE);
  /** W: the sum of the samples' weights as of the last sample (0 before the first). */
  private final AtomicLong evidenceBits = new AtomicLong(Double.doubleToRawLongBits(0.0));
  /** The weighted mean of d^2, d = ln((sample + 1) / (mean before it + 1)), over samples after the first. */
  private final AtomicLong spreadBits = new AtomicLong(Double.doubleToRawLongBits(0.0));
  private final AtomicLong lastSampleNanos;
  private volatile Instance instance;
  private volatile boolean probeDown;
  private volatile long lastSuccessNanos;
  private volatile long lastFailureNanos;
  private volatile boolean succeeded;
  private volatile boolean failed;

  // Guarded by the balancer's lock: what the last picker build saw, for slow start's ramp.
  boolean wasRoutable;
  boolean ramping;
  long routableSinceNanos;

  EndpointState(Instance instance, Duration ewmaDecay, LongSupplier nanoTime) {
    this.instance = instance;
    this.key = instance.key();
    this.nanoTime = nanoTime;
    this.decayNanos = ewmaDecay.toNanos();
    this.lastSampleNanos = new AtomicLong(nanoTime.getAsLong());
  }

  public InstanceKey key() {
    return key;
  }

  /** The instance as of the last set update. */
  public Instance instance() {
    return instance;
  }

  void instance(Instance updated) {
    this.instance = updated;
  }

  public OutlierState outlier() {
    return outlier;
  }

  public boolean isEjected() {
    return outlier.isEjected();
  }

  public boolean isDraining() {
    return instance.state() == InstanceState.DRAINING;
  }

  /** Registered but not ready: never a candidate, not even in panic. */
  public boolean isStarting() {
    return instance.state() == InstanceState.STARTING;
  }

  /** Not ejected, not down by active probes, and its record takes new calls ({@code UP}). */
  public boolean isAvailable() {
    return !isEjected() && !probeDown && instance.state().takesNewCalls();
  }

  /** True while active probes judge it down (see {@code dev.muster.health.Prober}). */
  public boolean isProbeDown() {
    return probeDown;
  }

  void probeDown(boolean down) {
    this.probeDown = down;
  }

  /** True while it ramps up after becoming routable (slow start). */
  public boolean isRamping() {
    return ramping;
  }

  /** An attempt's outcome, for the stale policy {@code KEEP_FAILING_ENDPOINTS_OUT}: ok or not, now. */
  public void outcome(boolean ok) {
    outcome(ok, nanoTime.getAsLong());
  }

  void outcome(boolean ok, long now) {
    if (ok) {
      lastSuccessNanos = now;
      succeeded = true;
    } else {
      lastFailureNanos = now;
      failed = true;
    }
  }

  /** When its last success was (the ticker's nanoseconds); meaningful only once it {@link #recentlySucceeded}. */
  long lastSuccessNanos() {
    return lastSuccessNanos;
  }

  /** Its last attempt succeeded, within {@code windowNanos} of {@code nowNanos}. */
  boolean recentlySucceeded(long nowNanos, long windowNanos) {
    if (!succeeded) {
      return false;
    }
    long success = lastSuccessNanos;
    return (!failed || success - lastFailureNanos > 0) && nowNanos - success <= windowNanos;
  }

  /** Attempts started and not yet finished. */
  public int inFlight() {
    return inFlight.get();
  }

  /** An attempt against this endpoint starts now. */
  public void started() {
    inFlight.incrementAndGet();
  }

  /** The attempt counted by {@link #started()} ended, successfully or not, after {@code latency}. */
  public void finished(Duration latency) {
    inFlight.decrementAndGet();
    sample(Math.max(0, latency.toNanos()));
  }

  /** False until the first attempt has finished. */
  /**
   * Whether the latency estimate is current at {@code nowNanos}: a sample within the last tenth of the decay (1 s by
   * default). Power of two compares latencies only between current estimates: an endpoint that lost every duel is
   * not sampled, so its estimate (often a cold connection's first answers) would never be corrected and it would get
   * no call for tens of seconds (the conformance suite's slow-start check saw a recovered endpoint get none for
   * 15 s). Stale, the two tie on latency and one call tells the truth again; a truly slower endpoint then gets about
   * one call per tenth of the decay, a share far below its fair one.
   */
  boolean isCurrent(long nowNanos) {
    return nowNanos - lastSampleNanos.get() < decayNanos / 10;
  }

  public boolean hasLatencySample() {
    return ewmaBits.get() != NO_SAMPLE;
  }

  /** The latency EWMA in nanoseconds; 0 before the first sample. */
  public double ewmaNanos() {
    double v = Double.longBitsToDouble(ewmaBits.get());
    return v < 0 ? 0 : v;
  }

  public Duration ewmaLatency() {
    return Duration.ofNanos((long) ewmaNanos());
  }

  /**
   * The load score, lower is better: {@code (inFlight + 1) × (ewmaNanos + 1)}, the expected wait of a new attempt if
   * each one in flight ahead of it takes the usual time (Finagle's "peak EWMA" cost without the peak). The
   * {@code +1}s keep an idle or not-yet-measured endpoint comparable instead of zero.
   *
   * <p>Power of two does not compare two of these as they are: it counts the latency ratio only by how much it
   * exceeds the noise of the two estimates (see {@link #latencyVariance}), and a tie goes to a random one of the two.
   * The score no longer fades toward zero while the endpoint is idle (issue 34, item 6: an idle endpoint then looked
   * infinitely fast); what fades instead is the weight of its evidence, so a slow-looking endpoint that gets no
   * calls becomes, within a few decay periods, indistinguishable from the others, and is tried again.
   */
  public double score() {
    return (inFlight.get() + 1.0) * (ewmaNanos() + 1.0);
  }

  /**
   * How much the samples behind {@link #ewmaNanos()} still count at {@code nowNanos}: their weights' sum, each
   * {@code exp(-age / decay)}; 0 before the first sample. About the number of samples of the last decay period.
   */
  double evidence(long nowNanos) {
    double w = Double.longBitsToDouble(evidenceBits.get());
    long idle = Math.max(0, nowNanos - lastSampleNanos.get());
    return w * Math.exp(-idle / decayNanos);
  }

  /**
   * The variance of {@code ln(ewmaNanos + 1)} as an estimate of this endpoint's typical latency, at
   * {@code nowNanos}: the spread of one sample (measured, blended with {@link #PRIOR_LOG_SPREAD} worth
   * {@link #PRIOR_WEIGHT} samples) over the {@link #evidence}. Infinite before the first sample, and it grows
   * without bound while no sample arrives: an estimate nobody refreshes stops telling endpoints apart.
   */
  double latencyVariance(long nowNanos) {
    double w = evidence(nowNanos);
    if (!hasLatencySample() || !(w > 0)) {
      return Double.POSITIVE_INFINITY;
    }
    double spread = Double.longBitsToDouble(spreadBits.get());
    double blended = (w * spread + PRIOR_WEIGHT * PRIOR_LOG_SPREAD * PRIOR_LOG_SPREAD) / (w + PRIOR_WEIGHT);
    return blended / w;
  }

  /** This state's ticker (the balancer's, shared by every state of one balancer). */
  long nowNanos() {
    return nanoTime.getAsLong();
  }

  private void sample(long latencyNanos) {
    long now = nanoTime.getAsLong();
    long elapsed = Math.max(0, now - lastSampleNanos.getAndSet(now));
    double w = Math.exp(-elapsed / decayNanos);
    double evidence;
    while (true) { // W' = W * w + 1: this sample weighs 1 / W' against the decayed weight of those before it
      long bits = evidenceBits.get();
      evidence = Math.min(MAX_EVIDENCE, Double.longBitsToDouble(bits) * w + 1.0);
      if (evidenceBits.compareAndSet(bits, Double.doubleToRawLongBits(evidence))) {
        break;
      }
    }
    double before;
    while (true) {
      long bits = ewmaBits.get();
      before = Double.longBitsToDouble(bits);
      double next = bits == NO_SAMPLE ? latencyNanos : before + (latencyNanos - before) / evidence;
      if (ewmaBits.compareAndSet(bits, Double.doubleToRawLongBits(next))) {
        break;
      }
    }
    if (before < 0) {
      return; // the first sample: no mean to deviate from
    }
    double d = Math.log((latencyNanos + 1.0) / (before + 1.0));
    while (true) {
      long bits = spreadBits.get();
      double spread = Double.longBitsToDouble(bits);
      double next = spread + (d * d - spread) / evidence;
      if (spreadBits.compareAndSet(bits, Double.doubleToRawLongBits(next))) {
        return;
      }
    }
  }

  @Override
  public String toString() {
    return "EndpointState[" + key.path() + ", " + inFlight.get() + " in flight, ewma "
        + Math.round(ewmaNanos() / 1000) + "us, " + outlier + "]";
  }
}
