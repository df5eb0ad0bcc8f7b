/**
 * Muster's xDS control plane: {@link dev.muster.xds.XdsServer} serves the Aggregated Discovery Service (state of the
 * world) a proxyless gRPC channel {@code xds:///SERVICE} walks — Listener, RouteConfiguration, Cluster and
 * ClusterLoadAssignment — from live endpoint caches (docs/design-xds.md). The messages and stubs are the Envoy
 * project's ({@code io.envoyproxy.controlplane:api}); the stream protocol and the mapping are Muster's.
 */
module dev.muster.xds {
  requires transitive dev.muster.etcd;
  // io.envoyproxy.controlplane:api has no Automatic-Module-Name: its file name (api-1.0.49.jar) names it "api".
  requires api;
  requires com.google.protobuf;
  requires com.fasterxml.jackson.databind; // the bootstrap JSON
  requires io.grpc;
  requires io.grpc.stub;
  requires io.grpc.netty;
  requires org.slf4j;
  requires static micrometer.core; // optional: only XdsServer.bindMeters needs it

  exports dev.muster.xds;
}
