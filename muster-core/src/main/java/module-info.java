module dev.muster.core {
  requires transitive java.net.http;
  requires com.fasterxml.jackson.databind;
  requires org.slf4j;
  requires org.bouncycastle.provider; // Ed25519 verification of signed records (8x the JDK 17 provider's speed)
  requires static micrometer.core; // optional: only when a MeterRegistry is given

  exports dev.muster;
  exports dev.muster.balance;
  exports dev.muster.cache;
  exports dev.muster.call;
  exports dev.muster.client;
  exports dev.muster.health;
  exports dev.muster.http;
  exports dev.muster.metrics;
  exports dev.muster.outlier;
  exports dev.muster.registry;
  exports dev.muster.retry;
  exports dev.muster.sign;

  // Machinery: the state machines, their runtime (LiveCache, LiveRegistration) and its threads (DeliveryPool), for
  // Muster's own etcd adapter only, which gives them their I/O. Nothing here requires etcd, jetcd or gRPC.
  exports dev.muster.internal to dev.muster.etcd, dev.muster.xds;
  exports dev.muster.cache.internal to dev.muster.etcd;
  exports dev.muster.registry.internal to dev.muster.etcd;
}
