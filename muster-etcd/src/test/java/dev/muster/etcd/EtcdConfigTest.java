package dev.muster.etcd;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.muster.InvalidInputException;
import java.net.URI;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

class EtcdConfigTest {

  @Test
  void theDefaultsAreTheLocalEtcdTheMusterRootTwoSecondsAndNoAuthentication() {
    EtcdConfig c = EtcdConfig.defaults();

    assertThat(c.endpoints()).containsExactly(URI.create(EtcdConfig.DEFAULT_ENDPOINT));
    assertThat(c.layout().rootPrefix()).isEqualTo("/muster/");
    assertThat(c.requestTimeout()).isEqualTo(Duration.ofSeconds(2));
    assertThat(c.credentials()).isNull();
  }

  @Test
  void aBuilderKeepsWhatItWasNotToldToChange() {
    EtcdConfig c = EtcdConfig.builder().endpoints("http://127.0.0.1:2379,http://127.0.0.1:2389")
        .credentials("orders", "s3cret").build();

    EtcdConfig changed = c.toBuilder().requestTimeout(Duration.ofSeconds(5)).build();

    assertThat(changed.endpoints()).hasSize(2);
    assertThat(changed.credentials().user()).isEqualTo("orders");
    assertThat(changed.requestTimeout()).isEqualTo(Duration.ofSeconds(5));
    assertThat(changed.toString()).doesNotContain("s3cret");
  }

  @Test
  void settingsFromAUsersOwnConfigurationBecomeAConfig() {
    EtcdConfig c = EtcdConfig.fromSettings(Map.of("endpoints", "http://127.0.0.1:2479", "root", "shop",
        "request-timeout", "1500ms", "user", "orders", "password", "pw"));

    assertThat(c.endpoints()).containsExactly(URI.create("http://127.0.0.1:2479"));
    assertThat(c.layout().rootPrefix()).isEqualTo("/shop/");
    assertThat(c.requestTimeout()).isEqualTo(Duration.ofMillis(1500));
    assertThat(c.credentials().user()).isEqualTo("orders");
    assertThat(EtcdConfig.fromSettings(Map.of())).isEqualTo(EtcdConfig.defaults());
  }

  @Test
  void watchStreamsDefaultToEightAreKeptByToBuilderAndAreRefusedOutsideOneToSixtyFour() {
    assertThat(EtcdConfig.defaults().watchStreams()).isEqualTo(EtcdConfig.DEFAULT_WATCH_STREAMS).isEqualTo(8);
    EtcdConfig c = EtcdConfig.builder().watchStreams(3).build();
    assertThat(c.toBuilder().requestTimeout(Duration.ofSeconds(5)).build().watchStreams()).isEqualTo(3);
    assertThat(c.withRequestTimeout(Duration.ofSeconds(5)).watchStreams()).isEqualTo(3);
    assertThat(EtcdConfig.fromSettings(Map.of("watch-streams", "16")).watchStreams()).isEqualTo(16);

    assertThatThrownBy(() -> EtcdConfig.builder().watchStreams(0).build())
        .isInstanceOf(InvalidInputException.class)
        .hasMessage("watchStreams 0 is invalid: use 1 to 64 Watch streams per connection (default 8)");
    assertThatThrownBy(() -> EtcdConfig.builder().watchStreams(65).build())
        .isInstanceOf(InvalidInputException.class).hasMessageStartingWith("watchStreams 65 is invalid");
    assertThatThrownBy(() -> EtcdConfig.fromSettings(Map.of("watch-streams", "eight")))
        .isInstanceOf(InvalidInputException.class).hasMessageStartingWith("watch-streams \"eight\" is invalid");
  }

  @Test
  void aMisspeltSettingIsRefusedWithTheKeysThatExist() {
    assertThatThrownBy(() -> EtcdConfig.fromSettings(Map.of("endpoint", "http://127.0.0.1:2379")))
        .isInstanceOf(InvalidInputException.class)
        .hasMessage("setting \"endpoint\" is invalid: use one of " + String.join(", ", EtcdConfig.SETTINGS));
  }

  @Test
  void badSettingValuesAreRefusedByName() {
    assertThatThrownBy(() -> EtcdConfig.fromSettings(Map.of("request-timeout", "2 seconds")))
        .isInstanceOf(InvalidInputException.class).hasMessageStartingWith("request-timeout \"2 seconds\" is invalid");
    assertThatThrownBy(() -> EtcdConfig.fromSettings(Map.of("endpoints", "ftp://127.0.0.1:2379")))
        .isInstanceOf(InvalidInputException.class).hasMessageStartingWith("endpoints \"ftp://127.0.0.1:2379\"");
    assertThatThrownBy(() -> EtcdConfig.fromSettings(Map.of("user", "orders")))
        .isInstanceOf(InvalidInputException.class).hasMessageContaining("password");
    assertThatThrownBy(() -> EtcdConfig.builder().endpoints(List.of()).build())
        .isInstanceOf(InvalidInputException.class).hasMessageContaining("give at least one etcd URL");
    assertThatThrownBy(() -> EtcdConfig.builder().requestTimeout(Duration.ZERO).build())
        .isInstanceOf(InvalidInputException.class).hasMessageStartingWith("requestTimeout PT0S is invalid");
  }

  @Test
  void tlsNeedsHttpsEndpointsEverywhereAndReadableFilesNamedWhenMissing(@org.junit.jupiter.api.io.TempDir
      java.nio.file.Path dir) throws Exception {
    java.nio.file.Path ca = java.nio.file.Files.writeString(dir.resolve("ca.pem"), "not checked here");

    assertThat(EtcdConfig.builder().endpoints("https://127.0.0.1:2379").tls(ca, null, null).build().tls().caCert())
        .isEqualTo(ca);
    assertThatThrownBy(() -> EtcdConfig.builder().endpoints("http://127.0.0.1:2379").tls(ca, null, null).build())
        .isInstanceOf(InvalidInputException.class).hasMessageContaining("use https:// endpoints with TLS");
    assertThatThrownBy(() -> EtcdConfig.of("https://127.0.0.1:2379,http://127.0.0.1:2389"))
        .isInstanceOf(InvalidInputException.class).hasMessageContaining("cannot mix TLS and plain text");
    assertThatThrownBy(() -> EtcdConfig.builder().tls(dir.resolve("nope.pem"), null, null))
        .isInstanceOf(InvalidInputException.class).hasMessageContaining("caCert").hasMessageContaining("nope.pem")
        .hasMessageContaining("no such file");
    assertThatThrownBy(() -> EtcdConfig.builder().tls(ca, ca, null))
        .isInstanceOf(InvalidInputException.class).hasMessageContaining("clientKey")
        .hasMessageContaining("together");
  }

  @Test
  void credentialsOverPlainHttpToAHostBeyondLoopbackAreRefusedInOneLine() {
    assertThatThrownBy(() -> EtcdConfig.builder().endpoints("http://127.0.0.1:2379,http://10.0.0.2:2379")
        .credentials("orders", "s3cret").build())
        .isInstanceOf(InvalidInputException.class)
        .hasMessage("endpoints \"[http://127.0.0.1:2379, http://10.0.0.2:2379]\" is invalid: etcd user orders's"
            + " password would cross the network in clear over http://: use https:// endpoints, or pass"
            + " --insecure-credentials (allowInsecureCredentials) knowing anyone on the path can read it")
        .hasMessageNotContaining("s3cret");
    // A host name is not resolved: etcd.example.com might be anywhere.
    assertThatThrownBy(() -> EtcdConfig.fromSettings(Map.of("endpoints", "http://etcd.example.com:2379",
        "user", "orders", "password", "pw"))).isInstanceOf(InvalidInputException.class);
    assertThatThrownBy(() -> EtcdConfig.builder().endpoints("http://[fd00::1]:2379").build()
        .withCredentials("orders", "pw")).isInstanceOf(InvalidInputException.class);
  }

  @Test
  void credentialsOverPlainHttpAreAcceptedOnLoopbackOverHttpsOrWhenAllowed() {
    for (String loopback : List.of("http://127.0.0.1:2379", "http://127.9.8.7:2379", "http://localhost:2379",
        "http://[::1]:2379")) {
      EtcdConfig c = EtcdConfig.builder().endpoints(loopback).credentials("orders", "pw").build();
      assertThat(c.sendsCredentialsInClear()).as(loopback).isFalse();
    }
    EtcdConfig allowed = EtcdConfig.builder().endpoints("http://10.0.0.1:2379").credentials("orders", "pw")
        .allowInsecureCredentials(true).build();
    assertThat(allowed.sendsCredentialsInClear()).isTrue();
    assertThat(allowed.toBuilder().requestTimeout(Duration.ofSeconds(3)).build().allowInsecureCredentials()).isTrue();
    assertThat(allowed.withRequestTimeout(Duration.ofSeconds(3)).allowInsecureCredentials()).isTrue();
    assertThat(EtcdConfig.fromSettings(Map.of("endpoints", "http://10.0.0.1:2379", "user", "orders", "password",
        "pw", "insecure-credentials", "true")).sendsCredentialsInClear()).isTrue();
    assertThat(EtcdConfig.builder().endpoints("http://10.0.0.1:2379").build().sendsCredentialsInClear()).isFalse();
    assertThat(EtcdConfig.builder().endpoints("https://10.0.0.1:2379").credentials("orders", "pw").build()
        .sendsCredentialsInClear()).isFalse();
  }

  /** docs/guide/provider.md's settings table is {@link EtcdConfig#SETTINGS}, with the defaults the builder has. */
  @Test
  void theGuidesSettingsTableIsEverySettingWithItsDefault() throws Exception {
    java.nio.file.Path page = java.nio.file.Path.of(System.getProperty("muster.docs.dir", "../docs"), "guide",
        "provider.md");
    Map<String, String> table = new java.util.LinkedHashMap<>();
    java.util.regex.Pattern row = java.util.regex.Pattern.compile("^\\s*\\| `([a-z-]+)` \\| ([^|]*) \\|");
    boolean in = false;
    for (String line : java.nio.file.Files.readAllLines(page)) {
      if (line.strip().startsWith("| Setting | Default | Meaning |")) {
        in = true;
      } else if (in && !line.strip().startsWith("|")) {
        break;
      }
      java.util.regex.Matcher m = row.matcher(line);
      if (in && m.find()) {
        table.put(m.group(1), m.group(2).strip());
      }
    }
    assertThat(table.keySet()).as("the settings in %s's table", page)
        .containsExactlyInAnyOrderElementsOf(EtcdConfig.SETTINGS);
    EtcdConfig defaults = EtcdConfig.builder().build();
    assertThat(table).as("the defaults in %s's table", page).containsEntry("endpoints",
        "`" + String.join(",", defaults.endpoints().stream().map(URI::toString).toList()) + "`")
        .containsEntry("root", "`" + defaults.layout().root() + "`")
        .containsEntry("request-timeout", "`" + defaults.requestTimeout().toSeconds() + "s`")
        .containsEntry("watch-streams", "`" + defaults.watchStreams() + "`")
        .containsEntry("insecure-credentials", "`" + defaults.allowInsecureCredentials() + "`");
  }
}
