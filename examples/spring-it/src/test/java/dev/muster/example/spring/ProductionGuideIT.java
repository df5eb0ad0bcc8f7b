package dev.muster.example.spring;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.muster.testing.ChildProcess;
import dev.muster.testing.ClassDataArchive;
import dev.muster.testing.LoopbackPorts;
import dev.muster.testing.TempDirs;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * docs/guide/production.md, run: every step its comments mark ({@link GuideSteps}), in order, through {@code bash}
 * in an empty directory, with {@code muster} on the PATH (the reactor's muster.jar behind the launcher that {@code
 * ./muster release} writes) and {@code orders.jar} the example's runnable jar. The only change to the page's commands
 * is the ports: etcd's {@code --client-port 2379} becomes 0 (free ports; the steps after it read the endpoints from
 * the lines it exports), and 8081, 50051 and 8070 become free ports. Then the checks the page's expectations do not
 * make: the console lists both services, and a user's role keeps it to its own service. Every process the page
 * starts is stopped by pid, the page's order reversed (SIGTERM, then SIGKILL to what is left).
 */
@Timeout(value = 6, unit = TimeUnit.MINUTES)
class ProductionGuideIT {
  private static final Pattern EXPORT = Pattern.compile("^export (MUSTER_[A-Z_]+)=(.*)$");
  private static final Duration READY = Duration.ofSeconds(120);
  /** The training run of muster.jar's class-data archive: muster-cli's ITs' (MusterJar), so they share one archive. */
  private static final List<String> CDS_TRAINING = List.of("ls", "--endpoints", "http://127.0.0.1:9");

  private final List<ChildProcess> started = new ArrayList<>();

  @AfterEach
  void stopEverything() {
    for (int i = started.size() - 1; i >= 0; i--) {
      ChildProcess p = started.get(i);
      if (p.isAlive()) {
        p.terminate();
        p.awaitExit(Duration.ofSeconds(30));
      }
      p.close();
    }
  }

  @Test
  void everyStepOfTheGuideRunsAndTheRegistryItBuildsServesBothServicesToTheirUsersOnly() throws Exception {
    GuideSteps guide = GuideSteps.read(Path.of(System.getProperty("muster.guide")));
    Path dir = TempDirs.create("muster-guide-");
    Path bin = Files.createDirectories(dir.resolve(".bin"));
    Path launcher = bin.resolve("muster");
    // the launcher ./muster release writes, on the reactor's jar
    Path jar = Path.of(System.getProperty("muster.jar")).toAbsolutePath();
    Files.writeString(launcher, "#!/usr/bin/env bash\nexec java ${MUSTER_JAVA_OPTS:-} -jar " + jar + " \"$@\"\n");
    Files.setPosixFilePermissions(launcher, PosixFilePermissions.fromString("rwxr-xr-x"));
    Files.createSymbolicLink(dir.resolve("orders.jar"), Path.of(System.getProperty("orders.jar")).toAbsolutePath());

    int ordersPort = LoopbackPorts.pick();
    int greeterPort = LoopbackPorts.pick();
    int consolePort = LoopbackPorts.pick();
    Map<String, String> ports = new LinkedHashMap<>();
    ports.put("--client-port 2379", "--client-port 0");
    ports.put("8081", Integer.toString(ordersPort));
    ports.put("50051", Integer.toString(greeterPort));
    ports.put("8070", Integer.toString(consolePort));

    // The page's JVMs start as the suite's other child JVMs do (two cores, a dozen JVMs): C1 and the serial collector
    // for every java the steps run (the launcher's and orders.jar's), and the CLI's classes from muster-cli's
    // class-data archive of muster.jar, which its ITs share. How the JVMs start is all these change.
    List<String> cliFlags = ClassDataArchive.flags(jar, ChildProcess.FAST_START_JVM_FLAGS, CDS_TRAINING);
    List<String> environment = new ArrayList<>(List.of(
        "cd " + dir,
        "export PATH=" + bin + ":" + Path.of(System.getProperty("java.home"), "bin") + ":$PATH",
        "export JDK_JAVA_OPTIONS='" + String.join(" ", ChildProcess.FAST_START_JVM_FLAGS) + "'",
        "export MUSTER_JAVA_OPTS='" + String.join(" ", cliFlags) + "'"));
    List<String> outputs = new ArrayList<>();
    for (GuideSteps.Step step : guide.steps()) {
      String name = "guide-line-" + step.line();
      List<String> commands = step.commands().stream().map(c -> withPorts(c, ports)).toList();
      List<String> script = new ArrayList<>(environment);
      script.add("set -e");
      if (step.kind() == GuideSteps.Kind.RUN) {
        script.addAll(commands);
        ChildProcess p = ChildProcess.start(name, List.of("bash", "-c", String.join("\n", script)));
        started.add(p);
        int exit = p.exitCode(Duration.ofSeconds(180));
        String out = String.join("\n", p.stdout()) + "\n" + String.join("\n", p.stderr());
        assertThat(exit).as("the step at line %d exits 0: %s", step.line(), out).isZero();
        assertThat(out).as("the step at line %d", step.line()).contains(step.text());
        outputs.add(out);
      } else {
        script.addAll(commands.subList(0, commands.size() - 1));
        script.add("exec " + commands.get(commands.size() - 1));
        ChildProcess p = ChildProcess.start(name, List.of("bash", "-c", String.join("\n", script)));
        started.add(p);
        await("the step at line " + step.line() + " ready (\"" + step.text() + "\")").atMost(READY)
            .pollInterval(Duration.ofMillis(200)).until(() -> !p.isAlive() || output(p).contains(step.text()));
        assertThat(p.isAlive()).as("the step at line %d still running: %s", step.line(), p).isTrue();
        if (step.exports()) {
          for (String line : p.stdout()) {
            Matcher m = EXPORT.matcher(line);
            if (m.matches()) {
              environment.add(line);
            }
          }
          assertThat(environment).as("the exports of the step at line %d", step.line())
              .anyMatch(l -> l.startsWith("export MUSTER_ENDPOINTS="));
        }
      }
    }
    // muster ls shows orders on the port the page gave it; greeter's calls went to the instance whose default id
    // (HOST-PORT-HEX) names the port the page gave it
    assertThat(String.join("\n", outputs)).as("the steps' output")
        .contains("127.0.0.1:" + ordersPort).containsPattern("ok OK via [^ ]*-" + greeterPort + "-");

    // The console serves both services, behind its token.
    String token = Files.readAllLines(dir.resolve("console.token")).get(0).strip();
    HttpClient http = HttpClient.newHttpClient();
    HttpResponse<String> sd = http.send(HttpRequest.newBuilder(
        URI.create("http://127.0.0.1:" + consolePort + "/api/prometheus-sd")).header("Authorization", "Bearer " + token)
        .timeout(Duration.ofSeconds(10)).build(), HttpResponse.BodyHandlers.ofString());
    assertThat(sd.statusCode()).as(sd.body()).isEqualTo(200);
    assertThat(sd.body()).contains("127.0.0.1:" + ordersPort).contains("127.0.0.1:" + greeterPort);
    HttpResponse<String> noToken = http.send(HttpRequest.newBuilder(
        URI.create("http://127.0.0.1:" + consolePort + "/api/prometheus-sd")).timeout(Duration.ofSeconds(10)).build(),
        HttpResponse.BodyHandlers.ofString());
    assertThat(noToken.statusCode()).as("without the token").isEqualTo(401);

    // The roles hold: orders may not read greeter, which only shop was granted.
    List<String> script = new ArrayList<>(environment);
    script.add("muster ls greeter --user orders --password-file orders.pass"
        + " --cert muster-prod/pki/client-orders.pem --key muster-prod/pki/client-orders-key.pem");
    ChildProcess denied = ChildProcess.start("guide-denied", List.of("bash", "-c", String.join("\n", script)));
    started.add(denied);
    assertThat(denied.exitCode(Duration.ofSeconds(60))).as("orders reading greeter: %s", denied).isNotZero();
    assertThat(String.join("\n", denied.stderr())).as("orders reading greeter").containsIgnoringCase("permission");
  }

  private static String output(ChildProcess p) {
    return String.join("\n", p.stdout()) + "\n" + String.join("\n", p.stderr());
  }

  private static String withPorts(String command, Map<String, String> ports) {
    String out = command;
    for (Map.Entry<String, String> e : ports.entrySet()) {
      out = out.replaceAll("(?<![0-9])" + Pattern.quote(e.getKey()) + "(?![0-9])", Matcher.quoteReplacement(e.getValue()));
    }
    return out;
  }
}
