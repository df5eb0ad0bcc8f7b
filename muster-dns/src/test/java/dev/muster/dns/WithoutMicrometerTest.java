package dev.muster.dns;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.File;
import java.net.URL;
import java.net.URLClassLoader;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Set;
import org.junit.jupiter.api.Test;

/**
 * Micrometer is an optional dependency: {@code muster dns} runs without it on its class path, so the gateway's class
 * must load (and pass the JVM's verifier) with it absent. Found by the suite of 0527e1b, where {@code DnsGateway}
 * itself held {@code bindMeters}'s code and {@code muster dns} failed at start with {@code ClassNotFoundException:
 * io.micrometer.core.instrument.Meter}.
 */
class WithoutMicrometerTest {
  /** This test's class path and module path without Micrometer's jars, in a loader that sees nothing else. */
  static URLClassLoader withoutMicrometer() throws Exception {
    Set<String> entries = new LinkedHashSet<>();
    for (String property : List.of("surefire.test.class.path", "jdk.module.path", "java.class.path")) {
      String value = System.getProperty(property);
      if (value != null && !value.isEmpty()) {
        entries.addAll(List.of(value.split(File.pathSeparator)));
      }
    }
    List<URL> urls = new ArrayList<>();
    for (String e : entries) {
      if (!e.contains("micrometer")) {
        urls.add(Path.of(e).toUri().toURL());
      }
    }
    return new URLClassLoader(urls.toArray(URL[]::new), ClassLoader.getPlatformClassLoader());
  }

  @Test
  void theGatewayLoadsWithoutMicrometerAndOnlyItsMetersNeedIt() throws Exception {
    try (URLClassLoader loader = withoutMicrometer()) {
      assertThatThrownBy(() -> Class.forName("io.micrometer.core.instrument.Meter", false, loader))
          .as("the loader really lacks Micrometer").isInstanceOf(ClassNotFoundException.class);

      Class<?> gateway = Class.forName("dev.muster.dns.DnsGateway", true, loader); // linked, so verified
      assertThat(gateway.getName()).isEqualTo("dev.muster.dns.DnsGateway");
      assertThatThrownBy(() -> Class.forName("dev.muster.dns.DnsMeters", true, loader))
          .as("the meters' class is the one that needs it").isInstanceOf(NoClassDefFoundError.class);
    }
  }
}
