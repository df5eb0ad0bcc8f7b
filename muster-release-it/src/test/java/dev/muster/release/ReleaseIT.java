package dev.muster.release;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.muster.testing.ChildProcess;
import dev.muster.testing.EtcdCluster;
import dev.muster.testing.LoopbackPorts;
import dev.muster.testing.TempDirs;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;
import java.util.zip.ZipFile;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * Muster as a team adopts it: three projects outside this reactor (plain Java, gRPC, Spring Boot), each in a fresh
 * directory with its own POM importing {@code muster-bom} from the release repository the build wrote
 * ({@code target/release/repository}: {@code ./muster test}'s first step, as {@code ./muster release} does). Each is
 * built by Maven against a local repository that holds everything but Muster's own artifacts (so those can only come
 * from the release), its class path holds one Netty line, and it runs against a real etcd.
 */
@Timeout(value = 8, unit = TimeUnit.MINUTES)
class ReleaseIT {
  private static final Path ROOT = Path.of(System.getProperty("muster.root", "..")).toAbsolutePath().normalize();
  private static final String VERSION = System.getProperty("muster.version", "0.2.0");
  private static final Path RELEASE = Path.of(System.getProperty("muster.release.repo",
      ROOT.resolve("target/release/repository").toString()));
  private static final Path USER_REPO = Path.of(System.getProperty("muster.m2",
      Path.of(System.getProperty("user.home"), ".m2", "repository").toString()));
  private static final Pattern NETTY =
      Pattern.compile("netty-[a-z0-9-]+?-(\\d+\\.\\d+\\.\\d+\\.Final)(-[a-z0-9_-]+)?\\.jar");

  @RegisterExtension
  static EtcdCluster etcd = EtcdCluster.builder().members(1).build();

  private static Path localRepo;

  @BeforeAll
  static void repositories() throws IOException {
    Path bom = RELEASE.resolve("dev/muster/muster-bom/" + VERSION + "/muster-bom-" + VERSION + ".pom");
    assertThat(bom).as("the release repository (./muster test writes it in its first step; or ./muster release --out"
        + " DIR, then -Dmuster.release.repo=DIR/repository)").exists();
    // Everything the user's Maven already has, but dev/muster: symlinks, so nothing is copied.
    localRepo = TempDirs.create("muster-release-m2-");
    try (Stream<Path> top = Files.list(USER_REPO)) {
      for (Path p : top.toList()) {
        if (p.getFileName().toString().equals("dev")) {
          Path dev = Files.createDirectories(localRepo.resolve("dev"));
          try (Stream<Path> groups = Files.list(p)) {
            for (Path g : groups.filter(g -> !g.getFileName().toString().equals("muster")).toList()) {
              Files.createSymbolicLink(dev.resolve(g.getFileName()), g);
            }
          }
        } else {
          Files.createSymbolicLink(localRepo.resolve(p.getFileName()), p);
        }
      }
    }
  }

  /** Every library the BOM manages is in the release with its POM, its jar, and its sources and Javadoc jars. */
  @Test
  void everyLibraryTheBomManagesShipsItsJarSourcesAndJavadoc() throws IOException {
    String bom = Files.readString(RELEASE.resolve("dev/muster/muster-bom/" + VERSION + "/muster-bom-" + VERSION
        + ".pom"));
    Matcher m = Pattern.compile("<artifactId>(muster-[a-z-]+)</artifactId>").matcher(
        bom.substring(bom.lastIndexOf("<dependencyManagement>"), bom.lastIndexOf("</dependencyManagement>")));
    List<String> missing = new ArrayList<>();
    int libraries = 0;
    while (m.find()) {
      String a = m.group(1);
      libraries++;
      Path dir = RELEASE.resolve("dev/muster/" + a + "/" + VERSION);
      for (String file : List.of(a + "-" + VERSION + ".pom", a + "-" + VERSION + ".jar",
          a + "-" + VERSION + "-sources.jar", a + "-" + VERSION + "-javadoc.jar")) {
        if (!Files.isRegularFile(dir.resolve(file)) || Files.size(dir.resolve(file)) == 0) {
          missing.add(file);
        }
      }
    }
    assertThat(libraries).as("the libraries the BOM manages").isGreaterThanOrEqualTo(9);
    assertThat(missing).as("files missing from the release repository %s", RELEASE).isEmpty();
  }

  @Test
  void plainJavaProviderAndConsumer() throws IOException {
    Path p = project("plain");
    copyTree(ROOT.resolve("examples/quickstart/src/main"), p.resolve("src/main"));
    build(p, "compile");
    assertOneNettyLine(jarNames(p.resolve("target/dependency")));

    String cp = p.resolve("target/classes") + ":" + p.resolve("target/dependency") + "/*";
    try (ChildProcess provider = java("plain-provider", cp, "dev.muster.example.quickstart.Provider",
        etcd.endpointsString())) {
      await("the provider registered").atMost(Duration.ofSeconds(60)).pollInterval(Duration.ofMillis(100))
          .until(() -> provider.stdout().stream().anyMatch(l -> l.startsWith("registered hello/"))
              || !provider.isAlive());
      assertThat(provider.isAlive()).as("the provider: %s", provider.stderrTail()).isTrue();
      try (ChildProcess consumer = java("plain-consumer", cp, "dev.muster.example.quickstart.Consumer",
          etcd.endpointsString(), "3")) {
        assertThat(consumer.exitCode(Duration.ofSeconds(60))).as("the consumer: %s", consumer.stderrTail())
            .isZero();
        assertThat(consumer.stdout().stream().filter(l -> l.startsWith("hello from ")))
            .as("the consumer's answers: %s", consumer.stdout()).hasSize(3);
      }
    }
  }

  @Test
  void grpcServerAndChannel() throws IOException {
    Path p = project("grpc");
    build(p, "compile");
    assertOneNettyLine(jarNames(p.resolve("target/dependency")));

    String cp = p.resolve("target/classes") + ":" + p.resolve("target/dependency") + "/*";
    try (ChildProcess app = java("grpc-app", cp, "example.GrpcApp", etcd.endpointsString(), "3")) {
      assertThat(app.exitCode(Duration.ofSeconds(90))).as("GrpcApp: %s", app.stderrTail()).isZero();
      assertThat(app.stdout().stream().filter(l -> l.startsWith("served by ")))
          .as("GrpcApp's answers: %s", app.stdout()).containsExactly("served by g1", "served by g1", "served by g1");
    }
  }

  @Test
  void springBootProviderAndConsumer() throws Exception {
    Path p = project("spring");
    copyTree(ROOT.resolve("examples/spring-orders/src/main"), p.resolve("orders/src/main"));
    copyTree(ROOT.resolve("examples/spring-shop/src/main"), p.resolve("shop/src/main"));
    build(p, "package", "-DskipTests");
    Path ordersJar = p.resolve("orders/target/orders.jar");
    Path shopJar = p.resolve("shop/target/shop.jar");
    assertOneNettyLine(bootLibs(ordersJar));
    assertOneNettyLine(bootLibs(shopJar));

    int shopPort = LoopbackPorts.pick();
    try (ChildProcess orders = boot("spring-orders", ordersJar, "--muster.instance.id=o1");
        ChildProcess shop = boot("spring-shop", shopJar, "--server.port=" + shopPort)) {
      HttpClient http = HttpClient.newHttpClient();
      HttpRequest buy = HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + shopPort + "/buy/1"))
          .timeout(Duration.ofSeconds(5)).build();
      List<String> answers = new ArrayList<>();
      await("shop calls orders").atMost(Duration.ofSeconds(120)).pollInterval(Duration.ofMillis(500)).until(() -> {
        assertThat(orders.isAlive()).as("orders: %s", orders.stderrTail()).isTrue();
        assertThat(shop.isAlive()).as("shop: %s", shop.stderrTail()).isTrue();
        try {
          HttpResponse<String> r = http.send(buy, HttpResponse.BodyHandlers.ofString());
          answers.add(r.statusCode() + " " + r.body());
          return r.statusCode() == 200 && r.body().contains("\"served_by\":\"o1\"");
        } catch (IOException e) {
          return false; // not listening yet
        }
      });
    }
  }

  /** A fresh copy of src/test/projects/NAME with the release repository and version filled in. */
  private static Path project(String name) throws IOException {
    Path dir = TempDirs.create("muster-release-" + name + "-");
    copyTree(Path.of("src/test/projects", name).toAbsolutePath(), dir);
    try (Stream<Path> poms = Files.walk(dir)) {
      for (Path pom : poms.filter(f -> f.getFileName().toString().equals("pom.xml")).toList()) {
        Files.writeString(pom, Files.readString(pom).replace("@RELEASE_REPO@", RELEASE.toUri().toString())
            .replace("@VERSION@", VERSION));
      }
    }
    return dir;
  }

  /**
   * Maven on the local repository without Muster's artifacts: what it needs of Muster can only come from the release
   * repository (no other repository has {@code dev.muster}); anything else it lacks it fetches as a user's Maven
   * would (a Spring Boot application's BOMs choose some versions this build never used).
   */
  private static void build(Path project, String... goals) {
    List<String> cmd = new ArrayList<>(List.of("mvn", "-B", "-Dmaven.repo.local=" + localRepo, "-f",
        project.resolve("pom.xml").toString()));
    cmd.addAll(List.of(goals));
    try (ChildProcess mvn = ChildProcess.start("mvn-" + project.getFileName(), cmd)) {
      int exit = mvn.exitCode(Duration.ofMinutes(5));
      assertThat(exit).as("mvn %s in %s:%n%s", String.join(" ", goals), project,
          String.join("\n", mvn.stdout().subList(Math.max(0, mvn.stdout().size() - 60), mvn.stdout().size())))
          .isZero();
    }
  }

  private static ChildProcess java(String name, String classpath, String main, String... args) {
    List<String> rest = new ArrayList<>(List.of("-cp", classpath, main));
    rest.addAll(List.of(args));
    return ChildProcess.start(name, ChildProcess.javaCommand(List.of("-XX:TieredStopAtLevel=1",
        "-XX:+UseSerialGC"), rest));
  }

  private static ChildProcess boot(String name, Path jar, String... args) {
    List<String> rest = new ArrayList<>(List.of("-jar", jar.toString(), "--muster.endpoints="
        + etcd.endpointsString()));
    rest.addAll(List.of(args));
    return ChildProcess.start(name, ChildProcess.javaCommand(List.of("-XX:TieredStopAtLevel=1",
        "-XX:+UseSerialGC", "-Xmx256m"), rest));
  }

  private static void assertOneNettyLine(List<String> jars) {
    Set<String> versions = new TreeSet<>();
    for (String jar : jars) {
      Matcher m = NETTY.matcher(jar);
      if (m.matches()) {
        versions.add(m.group(1));
      }
    }
    assertThat(versions).as("the Netty versions on the class path (%s)", jars).hasSize(1);
    assertThat(versions.iterator().next()).as("jetcd 0.8.6 runs on Netty 4.2").startsWith("4.2.");
  }

  private static List<String> jarNames(Path dir) throws IOException {
    try (Stream<Path> jars = Files.list(dir)) {
      return jars.map(j -> j.getFileName().toString()).sorted().toList();
    }
  }

  /** The jars a Spring Boot executable jar carries (BOOT-INF/lib). */
  private static List<String> bootLibs(Path bootJar) throws IOException {
    try (ZipFile zip = new ZipFile(bootJar.toFile())) {
      return zip.stream().map(e -> e.getName()).filter(n -> n.startsWith("BOOT-INF/lib/") && n.endsWith(".jar"))
          .map(n -> n.substring("BOOT-INF/lib/".length())).sorted().toList();
    }
  }

  private static void copyTree(Path from, Path to) throws IOException {
    try (Stream<Path> files = Files.walk(from)) {
      for (Path f : files.toList()) {
        Path target = to.resolve(from.relativize(f).toString());
        if (Files.isDirectory(f)) {
          Files.createDirectories(target);
        } else {
          Files.createDirectories(target.getParent());
          Files.copy(f, target);
        }
      }
    } catch (UncheckedIOException e) {
      throw e.getCause();
    }
  }
}
