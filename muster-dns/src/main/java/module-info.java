/**
 * Muster's DNS-SD gateway: {@link dev.muster.dns.DnsGateway} answers PTR, SRV, TXT, A and AAAA for the services of
 * an etcd registry from live endpoint caches. Message parsing, record types and wire format are dnsjava's; the
 * listening loops, the index and the rate limiter are Muster's.
 */
module dev.muster.dns {
  requires transitive dev.muster.etcd;
  requires org.dnsjava;
  requires org.slf4j;
  requires static micrometer.core; // optional: only DnsGateway.bindMeters needs it

  exports dev.muster.dns;
}
