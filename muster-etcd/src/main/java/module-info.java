module dev.muster.etcd {
  requires transitive dev.muster.core;
  requires jetcd.core; // jetcd has no Automatic-Module-Name: its file name gives this one
  requires jetcd.common; // its exception types (CompactedException, EtcdException)
  requires io.netty.handler; // TLS: jetcd takes a Netty SslContext
  requires io.grpc.netty; // ... built with gRPC's ALPN settings
  requires io.grpc; // status codes: errors are classified by code, never by message text
  requires jetcd.grpc; // etcd's generated Lease, Watch and Auth stubs: the keepalive and watch streams on jetcd's channel
  requires com.google.protobuf; // the watch create's watch_id, a field jetcd's generated class lacks
  requires io.grpc.stub; // ... and their StreamObserver
  requires org.slf4j;
  requires java.naming; // the user name in a client certificate's subject (LdapName)

  exports dev.muster.etcd;
  // dev.muster.etcd.internal is not exported: the jetcd I/O behind the core's drivers (EtcdCacheIo, EtcdRegistrarIo,
  // WatchStream, KeepAliveStream, EtcdConnection, ...). The caches' and registrations' runtime is the core's.
}
