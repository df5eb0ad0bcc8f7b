/** The grpc section: Muster's gRPC adapter (resolver, muster policy, retry interceptor) next to gRPC's own policies. */
package dev.muster.bench.grpc;
