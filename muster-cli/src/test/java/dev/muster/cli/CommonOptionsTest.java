package dev.muster.cli;

import static org.assertj.core.api.Assertions.assertThat;

import dev.muster.InvalidInputException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
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

  @Test
  void theUserComesWithAPasswordFileNeverAPasswordFlag() throws Exception {
    Path secret = Files.writeString(dir.resolve("pw"), "s3cret\n");
    CommonOptions options = new CommonOptions();
    options.user = "orders";
    options.passwordFile = secret;

    assertThat(options.etcdConfig(Map.<String, String>of()::get).credentials().password()).isEqualTo("s3cret");
    CommonOptions fromEnv = new CommonOptions();
    assertThat(fromEnv.etcdConfig(Map.of("MUSTER_USER", "billing", "MUSTER_PASSWORD_FILE", secret.toString())::get)
        .credentials().user()).isEqualTo("billing");
    CommonOptions half = new CommonOptions();
    half.user = "orders";
    org.assertj.core.api.Assertions.assertThatThrownBy(() -> half.etcdConfig(Map.<String, String>of()::get))
        .hasMessageContaining("--user orders needs --password-file");
    options.passwordFile = dir.resolve("missing");
    org.assertj.core.api.Assertions.assertThatThrownBy(() -> options.etcdConfig(Map.<String, String>of()::get))
        .hasMessageContaining("password-file").hasMessageContaining("no such file");
  }

  @Test
  void aPasswordOverPlainHttpBeyondLoopbackNeedsInsecureCredentials() throws Exception {
    Path secret = Files.writeString(dir.resolve("pw"), "s3cret\n");
    CommonOptions options = new CommonOptions();
    options.endpoints = "http://10.0.0.1:2379";
    options.user = "orders";
    options.passwordFile = secret;

    org.assertj.core.api.Assertions.assertThatThrownBy(() -> options.etcdConfig(Map.<String, String>of()::get))
        .isInstanceOf(InvalidInputException.class).hasMessageContaining("--insecure-credentials")
        .hasMessageNotContaining("s3cret");
    assertThat(options.etcdConfig(Map.of("MUSTER_INSECURE_CREDENTIALS", "true")::get).allowInsecureCredentials())
        .isTrue();
    options.insecureCredentials = true;
    assertThat(options.etcdConfig(Map.<String, String>of()::get).sendsCredentialsInClear()).isTrue();
  }

  @Test
  void theRequestTimeoutComesFromTheFlagElseTheEnvironmentElseFiveSeconds() {
    Map<String, String> env = Map.of("MUSTER_REQUEST_TIMEOUT", "8s");
    CommonOptions options = new CommonOptions();

    assertThat(options.etcdConfig(Map.<String, String>of()::get).requestTimeout()).isEqualTo(Duration.ofSeconds(5));
    assertThat(options.etcdConfig(Map.of("MUSTER_REQUEST_TIMEOUT", " ")::get).requestTimeout())
        .as("blank is unset").isEqualTo(Duration.ofSeconds(5));
    assertThat(options.etcdConfig(env::get).requestTimeout()).isEqualTo(Duration.ofSeconds(8));
    options.requestTimeout = Duration.ofMillis(1500);
    assertThat(options.etcdConfig(env::get).requestTimeout()).as("the flag wins").isEqualTo(Duration.ofMillis(1500));
    org.assertj.core.api.Assertions.assertThatThrownBy(
            () -> new CommonOptions().etcdConfig(Map.of("MUSTER_REQUEST_TIMEOUT", "later")::get))
        .isInstanceOf(InvalidInputException.class).hasMessageContaining("MUSTER_REQUEST_TIMEOUT")
        .hasMessageContaining("later");
  }
}
