/**
 * Muster for Spring Boot 4 and Spring Cloud 2025.1: auto-registration with the bound port and an ordered
 * graceful shutdown ({@link dev.muster.spring.MusterServiceRegistry}, {@link dev.muster.spring.MusterDrainLifecycle}),
 * discovery on live caches ({@link dev.muster.spring.MusterDiscoveryClient}), Spring Cloud LoadBalancer on Muster's
 * engine ({@link dev.muster.spring.MusterLoadBalancer}), health and {@code /actuator/muster}. Configured by
 * {@link dev.muster.spring.MusterProperties} ({@code muster.*}).
 */
package dev.muster.spring;
