package dev.muster.grpc;

import dev.muster.registry.Instance;
import io.grpc.Attributes;
import io.grpc.EquivalentAddressGroup;
import java.time.Instant;
import java.util.List;
import java.util.Map;

/**
 * The attributes the {@code muster:///} resolver puts on what it delivers: on each {@link EquivalentAddressGroup}
 * (one per registered instance) the instance's id, weight, zone, region, tags and metadata; on the
 * {@link io.grpc.NameResolver.ResolutionResult} whether the set is stale (etcd unreachable, the last good set
 * re-sent). A custom load balancer can read them; the {@code muster} policy reads the instance itself.
 */
public final class MusterAttributes {
  /** The instance's id, unique within its service. */
  @EquivalentAddressGroup.Attr
  public static final Attributes.Key<String> INSTANCE_ID = Attributes.Key.create("muster.instance-id");

  /** The instance's static weight (0 to {@value Instance#MAX_WEIGHT}, default {@value Instance#DEFAULT_WEIGHT}). */
  @EquivalentAddressGroup.Attr
  public static final Attributes.Key<Integer> WEIGHT = Attributes.Key.create("muster.weight");

  /** The instance's zone; absent when it registered none. */
  @EquivalentAddressGroup.Attr
  public static final Attributes.Key<String> ZONE = Attributes.Key.create("muster.zone");

  /** The instance's region; absent when it registered none. */
  @EquivalentAddressGroup.Attr
  public static final Attributes.Key<String> REGION = Attributes.Key.create("muster.region");

  /** The instance's tags, immutable, possibly empty. */
  @EquivalentAddressGroup.Attr
  public static final Attributes.Key<List<String>> TAGS = Attributes.Key.create("muster.tags");

  /** The instance's metadata, immutable, possibly empty. */
  @EquivalentAddressGroup.Attr
  public static final Attributes.Key<Map<String, String>> METADATA = Attributes.Key.create("muster.metadata");

  /**
   * On a resolution result: since when etcd has been unreachable while this (last good) set is served; absent when
   * the set is fresh.
   */
  @io.grpc.NameResolver.ResolutionResultAttr
  public static final Attributes.Key<Instant> STALE_SINCE = Attributes.Key.create("muster.stale-since");

  /** The whole instance, for the {@code muster} policy (it rebuilds an endpoint set from it). Not public API. */
  @EquivalentAddressGroup.Attr
  static final Attributes.Key<Instance> INSTANCE = Attributes.Key.create("muster.instance");

  private MusterAttributes() {}
}
