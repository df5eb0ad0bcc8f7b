package dev.muster.etcd;

import dev.muster.testing.EtcdCluster;
import dev.muster.testing.FaultProxy;
import java.util.UUID;

/**
 * The cache ITs' fixture: a registry that reaches member 0 through a {@link FaultProxy} (so a test can cut, black
 * hole or delay it), and a plain writer on a fresh service, straight to etcd. Closed after each test.
 */
final class ProxiedEtcd implements AutoCloseable {
  final FaultProxy proxy;
  final EtcdRegistry viaProxy;
  final PlainEtcdWriter writer;

  ProxiedEtcd(EtcdCluster etcd) {
    proxy = FaultProxy.to(etcd.member(0).clientUrl());
    viaProxy = EtcdRegistry.connect(EtcdConfig.of(proxy.uri().toString()));
    writer = new PlainEtcdWriter(etcd.endpoints(), "svc-" + UUID.randomUUID().toString().substring(0, 8));
  }

  @Override
  public void close() {
    try {
      viaProxy.close();
    } finally {
      proxy.close();
      writer.close();
    }
  }
}
