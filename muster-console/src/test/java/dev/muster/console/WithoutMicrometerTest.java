package dev.muster.console;

import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.File;
import java.net.URL;
import java.net.URLClassLoader;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * Micrometer is an optional dependency: {@code muster console} runs without it on its class path, so the server's
 * classes must load (and pass the JVM's verifier) with it absent; only {@link ConsoleMeters} may need it. As
 * muster-dns's test of the same name, which the suite's failure of 0527e1b led to (the console's classes passed it
 * then; this keeps them so).
 */
class WithoutMicrometerTest {
  @Test
  void theConsoleLoadsWithoutMicrometerAndOnlyItsMetersNeedIt() throws Exception {
    List<URL> urls = new ArrayList<>();
    for (String property : List.of("surefire.test.class.path", "jdk.module.path", "java.class.path")) {
      for (String e : System.getProperty(property, "").split(File.pathSeparator)) {
        if (!e.isEmpty() && !e.contains("micrometer")) {
          urls.add(Path.of(e).toUri().toURL());
        }
      }
    }
    try (URLClassLoader loader = new URLClassLoader(urls.toArray(URL[]::new), ClassLoader.getPlatformClassLoader())) {
      assertThatThrownBy(() -> Class.forName("io.micrometer.core.instrument.Meter", false, loader))
          .as("the loader really lacks Micrometer").isInstanceOf(ClassNotFoundException.class);
      for (String name : List.of("ConsoleServer", "internal.ConsoleRuntime", "internal.Routes")) {
        Class.forName("dev.muster.console." + name, true, loader); // linked, so verified: throws if it needs it
      }
    }
  }
}
