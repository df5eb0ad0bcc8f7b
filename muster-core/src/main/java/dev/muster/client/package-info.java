/**
 * Calling a service by name over any transport: {@link dev.muster.client.MusterClient} ties one service's endpoint
 * cache, balancer, outlier detector, retry budget and call engine together behind one builder. Transports (HTTP in
 * {@code dev.muster.http}, later gRPC) implement {@link dev.muster.call.Attempt} and call through it.
 */
package dev.muster.client;
