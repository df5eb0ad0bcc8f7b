/** Real etcd for tests: the launcher and JUnit 5 extension, the fault proxy, child processes and JSON-lines logs. */
module dev.muster.testing {
  requires transitive com.fasterxml.jackson.databind; // JsonLog hands out JsonNode
  requires transitive org.junit.jupiter.api; // EtcdCluster is an extension
  requires java.net.http; // health checks of the etcd members it starts

  exports dev.muster.testing;
}
