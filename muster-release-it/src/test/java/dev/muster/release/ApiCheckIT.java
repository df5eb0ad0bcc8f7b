package dev.muster.release;

import static org.assertj.core.api.Assertions.assertThat;

import dev.muster.testing.ChildProcess;
import dev.muster.testing.TempDirs;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Enumeration;
import java.util.List;
import java.util.zip.ZipEntry;
import java.util.zip.ZipFile;
import java.util.zip.ZipOutputStream;
import org.junit.jupiter.api.Test;

/**
 * The API check as the build runs it: japicmp with muster-parent's own configuration (its execution
 * {@code api-check}), run by Maven in a fresh directory on a version of {@code muster-core}'s jar against the
 * committed baseline ({@code api/VERSION/muster-core.jar}). A breaking change fails; the same change declared as an
 * exclude passes; a change in a package that is not exported passes.
 */
class ApiCheckIT {
  private static final Path ROOT = Path.of(System.getProperty("muster.root", "..")).toAbsolutePath().normalize();
  private static final String VERSION = System.getProperty("muster.version", "0.2.0");
  private static final String BASELINE_VERSION = System.getProperty("muster.api.baseline", "0.2.0");
  private static final Path BASELINE = ROOT.resolve("api").resolve(BASELINE_VERSION).resolve("muster-core.jar");
  private static final String EXPORTED_CLASS = "dev/muster/registry/Names.class";
  private static final String INTERNAL_CLASS = "dev/muster/internal/SerialExecutor.class";

  /** What one check printed and how it ended. */
  private record Check(int exit, String output) {}

  @Test
  void theLibraryAsBuiltMatchesItsBaseline() {
    Path built = ROOT.resolve("muster-core/target/muster-core-" + VERSION + ".jar");
    assertThat(built).as("muster-core's jar, built before this test").exists();
    Check c = check(built, "");
    assertThat(c.exit()).as("japicmp on muster-core as built:%n%s", c.output()).isZero();
  }

  @Test
  void aRemovedExportedClassFailsTheBuild() {
    Check c = check(without(EXPORTED_CLASS), "");
    assertThat(c.exit()).as("japicmp with %s removed:%n%s", EXPORTED_CLASS, c.output()).isNotZero();
    assertThat(c.output()).contains("dev.muster.registry.Names").contains("CLASS_REMOVED");
  }

  @Test
  void aBreakingChangeDeclaredAsAnExcludePasses() {
    Check c = check(without(EXPORTED_CLASS), "<exclude>dev.muster.registry.Names</exclude>");
    assertThat(c.exit()).as("japicmp with the removal declared:%n%s", c.output()).isZero();
  }

  @Test
  void aChangeInAPackageThatIsNotExportedPasses() {
    Check c = check(without(INTERNAL_CLASS), "");
    assertThat(c.exit()).as("japicmp with %s removed:%n%s", INTERNAL_CLASS, c.output()).isZero();
  }

  /** Runs the parent's api-check execution on {@code jar} as muster-core's new version. */
  private static Check check(Path jar, String extraExcludes) {
    Path dir = TempDirs.create("muster-api-check-");
    try {
      Files.createDirectories(dir.resolve(".mvn")); // the project's top: ${maven.multiModuleProjectDirectory}
      Path baseline = dir.resolve("api").resolve(BASELINE_VERSION).resolve("muster-core.jar");
      Files.createDirectories(baseline.getParent());
      Files.copy(BASELINE, baseline);
      Path target = dir.resolve("target").resolve("muster-core-" + VERSION + ".jar");
      Files.createDirectories(target.getParent());
      Files.copy(jar, target);
      Files.writeString(dir.resolve("pom.xml"), """
          <project xmlns="http://maven.apache.org/POM/4.0.0">
            <modelVersion>4.0.0</modelVersion>
            <parent>
              <groupId>dev.muster</groupId>
              <artifactId>muster-parent</artifactId>
              <version>%s</version>
              <relativePath>%s</relativePath>
            </parent>
            <artifactId>muster-core</artifactId>
            <build>
              <plugins>
                <plugin>
                  <groupId>com.github.siom79.japicmp</groupId>
                  <artifactId>japicmp-maven-plugin</artifactId>
                  <configuration>
                    <parameter>
                      <excludes combine.children="append">%s</excludes>
                    </parameter>
                  </configuration>
                </plugin>
              </plugins>
            </build>
          </project>
          """.formatted(VERSION, dir.relativize(ROOT.resolve("pom.xml")), extraExcludes));
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
    String localRepo = System.getProperty("muster.m2", Path.of(System.getProperty("user.home"), ".m2", "repository")
        .toString());
    try (ChildProcess mvn = ChildProcess.start("api-check", List.of("mvn", "-B", "-o", "-Dmaven.repo.local="
        + localRepo, "-f",
        dir.resolve("pom.xml").toString(), "com.github.siom79.japicmp:japicmp-maven-plugin:cmp@api-check"))) {
      int exit = mvn.exitCode(Duration.ofMinutes(2));
      return new Check(exit, String.join("\n", mvn.stdout()) + "\n" + String.join("\n", mvn.stderr()));
    }
  }

  /** The baseline jar without {@code entry}. */
  private static Path without(String entry) {
    Path out = TempDirs.create("muster-api-jar-").resolve("muster-core.jar");
    boolean found = false;
    try (ZipFile in = new ZipFile(BASELINE.toFile());
        ZipOutputStream zip = new ZipOutputStream(Files.newOutputStream(out))) {
      for (Enumeration<? extends ZipEntry> e = in.entries(); e.hasMoreElements(); ) {
        ZipEntry z = e.nextElement();
        if (z.getName().equals(entry)) {
          found = true;
          continue;
        }
        zip.putNextEntry(new ZipEntry(z.getName()));
        in.getInputStream(z).transferTo(zip);
        zip.closeEntry();
      }
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
    assertThat(found).as("%s in the baseline %s", entry, BASELINE).isTrue();
    return out;
  }
}
