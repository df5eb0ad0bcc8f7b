/**
 * Signed instance records: a provider signs its value with an Ed25519 {@link dev.muster.sign.SigningKey}
 * ({@link dev.muster.registry.RegistrarConfig.Builder#signingKey}); a consumer configured with
 * {@link dev.muster.sign.TrustedKeys} ({@link dev.muster.cache.CacheConfig.Builder#trustedKeys}) serves only
 * records signed by a key it trusts for that service, for that etcd key and lease, and excludes and counts the
 * rest ({@link dev.muster.cache.EndpointCache#unverifiedCount()}). {@link dev.muster.sign.RecordSignature} says
 * exactly what is signed. Every type here is immutable or stateless and safe to share between threads.
 */
package dev.muster.sign;
