/**
 * Muster for grpc-java: {@code muster:///SERVICE} name resolution, the {@code muster} load-balancing policy (Muster's
 * balancer, local ejection and budgeted retries on gRPC subchannels) and drain-aware servers.
 */
package dev.muster.grpc;
