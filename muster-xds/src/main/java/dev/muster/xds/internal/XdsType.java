package dev.muster.xds.internal;

import java.util.Optional;

/** The four resource types a gRPC channel walks, in the order it asks for them, with their v3 type URLs. */
public enum XdsType {
  LISTENER("type.googleapis.com/envoy.config.listener.v3.Listener", true),
  ROUTE("type.googleapis.com/envoy.config.route.v3.RouteConfiguration", false),
  CLUSTER("type.googleapis.com/envoy.config.cluster.v3.Cluster", true),
  ENDPOINT("type.googleapis.com/envoy.config.endpoint.v3.ClusterLoadAssignment", false);

  private final String typeUrl;
  private final boolean fullState;

  XdsType(String typeUrl, boolean fullState) {
    this.typeUrl = typeUrl;
    this.fullState = fullState;
  }

  public String typeUrl() {
    return typeUrl;
  }

  /**
   * Whether a client reads a resource left out of a response of this type as deleted (LDS and CDS); for RDS and
   * EDS a response says nothing of what it leaves out.
   */
  public boolean fullState() {
    return fullState;
  }

  /** The type of {@code typeUrl}, or empty for a type this server does not serve. */
  public static Optional<XdsType> of(String typeUrl) {
    for (XdsType t : values()) {
      if (t.typeUrl.equals(typeUrl)) {
        return Optional.of(t);
      }
    }
    return Optional.empty();
  }
}
