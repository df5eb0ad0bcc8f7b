package dev.muster.cli;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class CommonOptionsTest {
  @TempDir
  Path dir;

  @Test
  void tlsFilesComeFromTheFlagsElseTheEnvironment() throws Exception {
    Path ca = Files.writeString(dir.resolve("ca.pem"), "x");
    Path other = Files.writeString(dir.resolve("other.pem"), "x");
    Map<String, String> env = Map.of("MUSTER_ENDPOINTS", "https://127.0.0.1:2379", "MUSTER_CACERT", ca.toString(),
        "MUSTER_AUTHORITY", "etcd.internal");
    CommonOptions options = new CommonOptions();

    assertThat(options.etcdConfig(env::get).tls().caCert()).isEqualTo(ca);
    assertThat(options.etcdConfig(env::get).tls().authority()).isEqualTo("etcd.internal");
    options.cacert = other;
    assertThat(options.etcdConfig(env::get).tls().caCert()).as("the flag wins").isEqualTo(other);
    assertThat(new CommonOptions().etcdConfig(Map.<String, String>of()::get).tls()).isNull();
  }
}
