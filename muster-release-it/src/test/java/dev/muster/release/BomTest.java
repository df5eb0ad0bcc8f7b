package dev.muster.release;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;

/**
 * muster-bom manages exactly the libraries the build publishes: every module of the reactor that is a jar and does
 * not set {@code muster.publish.skip}, each at the build's version, and nothing else.
 */
class BomTest {
  private static final Path ROOT = Path.of(System.getProperty("muster.root", "..")).toAbsolutePath().normalize();
  private static final Pattern MODULE = Pattern.compile("<module>([^<]+)</module>");
  private static final Pattern MANAGED = Pattern.compile(
      "<dependency>\\s*<groupId>dev\\.muster</groupId>\\s*<artifactId>([^<]+)</artifactId>\\s*"
          + "<version>([^<]+)</version>\\s*</dependency>");

  @Test
  void theBomManagesExactlyThePublishedLibraries() throws IOException {
    List<String> published = new ArrayList<>();
    Matcher m = MODULE.matcher(Files.readString(ROOT.resolve("pom.xml")));
    while (m.find()) {
      String pom = Files.readString(ROOT.resolve(m.group(1)).resolve("pom.xml"));
      boolean skipped = pom.contains("<muster.publish.skip>true</muster.publish.skip>");
      boolean jar = !pom.contains("<packaging>pom</packaging>");
      if (jar && !skipped) {
        published.add(artifactId(pom));
      }
    }
    String bom = Files.readString(ROOT.resolve("muster-bom/pom.xml"));
    List<String> managed = new ArrayList<>();
    Matcher d = MANAGED.matcher(bom);
    while (d.find()) {
      managed.add(d.group(1));
      assertThat(d.group(2)).as("%s's version in the BOM", d.group(1)).isEqualTo("${project.version}");
    }
    assertThat(published).as("the reactor's published libraries").hasSizeGreaterThanOrEqualTo(9);
    assertThat(managed).as("what muster-bom manages").containsExactlyInAnyOrderElementsOf(published);
  }

  /** The module's own artifactId: the first one after its parent's. */
  private static String artifactId(String pom) {
    int afterParent = pom.indexOf("</parent>");
    Matcher a = Pattern.compile("<artifactId>([^<]+)</artifactId>").matcher(pom);
    assertThat(a.find(Math.max(afterParent, 0))).isTrue();
    return a.group(1);
  }
}
