/**
 * A DNS-SD gateway (RFC 6763, RFC 2782) for a Muster registry: {@link dev.muster.dns.DnsGateway} and its
 * {@link dev.muster.dns.DnsConfig}. {@code muster dns} runs one.
 */
package dev.muster.dns;
