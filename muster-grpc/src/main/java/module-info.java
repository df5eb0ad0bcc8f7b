/**
 * Muster for grpc-java: the {@code muster:///} name resolver, the {@code muster} load-balancing policy, the retry
 * interceptor and the drain-aware server helper ({@code dev.muster.grpc}), and the demo Echo service
 * ({@code dev.muster.grpc.echo}). Both providers are registered for grpc-java's registries, on the class path
 * ({@code META-INF/services}) and on the module path ({@code provides}).
 */
module dev.muster.grpc {
  requires transitive dev.muster.etcd;
  requires transitive io.grpc; // the API's types: NameResolverProvider, LoadBalancerProvider, Server, CallOptions
  requires io.grpc.stub; // Echo's handlers
  requires io.grpc.services; // grpc.health.v1 (HealthStatusManager)
  requires com.fasterxml.jackson.databind; // Echo's JSON marshaller
  requires org.slf4j;

  exports dev.muster.grpc;
  exports dev.muster.grpc.echo;

  provides io.grpc.NameResolverProvider with dev.muster.grpc.MusterNameResolverProvider;
  provides io.grpc.LoadBalancerProvider with dev.muster.grpc.MusterLoadBalancerProvider;
}
