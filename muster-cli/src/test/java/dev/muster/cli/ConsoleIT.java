package dev.muster.cli;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import dev.muster.testing.ChildProcess;
import dev.muster.etcd.EtcdAuth;
import dev.muster.etcd.EtcdConfig;
import dev.muster.testing.EtcdCluster;
import dev.muster.testing.TempDirs;
import dev.muster.testing.TestPki;
import java.io.File;
import java.io.IOException;
import java.io.OutputStream;
import java.net.Socket;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.URLDecoder;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.openqa.selenium.By;
import org.openqa.selenium.JavascriptExecutor;
import org.openqa.selenium.NoAlertPresentException;
import org.openqa.selenium.OutputType;
import org.openqa.selenium.WebElement;
import org.openqa.selenium.chrome.ChromeDriver;
import org.openqa.selenium.chrome.ChromeDriverService;
import org.openqa.selenium.chrome.ChromeOptions;

/**
 * {@code muster console} as a real process, over a real etcd and three real {@code muster register} providers, read
 * by a real headless Chromium (Debian's {@code chromium} and {@code chromium-driver}, driven by Selenium; Selenium
 * Manager never runs, only loopback is used). The page is loaded once and never reloaded: a marker set in its
 * {@code window} must survive every step. Screenshots go to {@code target/console-screenshots/}.
 */
@Timeout(value = 3, unit = TimeUnit.MINUTES)
class ConsoleIT {
  @RegisterExtension
  static EtcdCluster etcd = EtcdCluster.builder().members(1).build();

  private static final Path DIR = TempDirs.create("muster-console-it-");
  private static final TestPki PKI = TestPki.create(DIR.resolve("pki"));

  /** TLS only, with auth: the console connects as a password user that may read the namespace, not write. */
  @RegisterExtension
  static EtcdCluster secured = EtcdCluster.builder().members(1).tls(PKI).auth().build();

  private static final String XSS = "<img src=x onerror=alert(1)>";
  private static final Duration EXIT = Duration.ofSeconds(30);
  private static final Path SHOTS = Path.of("target", "console-screenshots");

  private static ChromeDriverService service;
  private static ChromeDriver driver;
  private static final Set<ProcessHandle> browser = new HashSet<>();

  @BeforeAll
  static void startBrowser() throws IOException {
    Files.createDirectories(SHOTS);
    Set<ProcessHandle> before = children();
    service = new ChromeDriverService.Builder().usingDriverExecutable(new File("/usr/bin/chromedriver"))
        .usingAnyFreePort().build();
    service.start();
    children().stream().filter(p -> !before.contains(p)).forEach(browser::add);
    ChromeOptions options = new ChromeOptions();
    options.setBinary("/usr/bin/chromium");
    options.addArguments("--headless=new", "--no-sandbox", "--disable-dev-shm-usage", "--window-size=1280,900",
        "--no-first-run", "--disable-background-networking", "--disable-component-update", "--disable-sync",
        "--disable-default-apps");
    driver = new ChromeDriver(service, options);
    driver.manage().timeouts().pageLoadTimeout(Duration.ofSeconds(30));
  }

  /** quit() and stop(), then SIGKILL by pid whatever of chromedriver and its descendants is still alive. */
  @AfterAll
  static void stopBrowser() {
    List<ProcessHandle> recorded = new ArrayList<>(browser);
    browser.forEach(p -> p.descendants().forEach(recorded::add));
    try {
      if (driver != null) {
        driver.quit();
      }
    } finally {
      if (service != null) {
        service.stop();
      }
      for (ProcessHandle p : recorded) {
        if (p.isAlive()) {
          p.destroyForcibly();
        }
      }
    }
  }

  @Test
  void pagesFollowTheRegistryLiveAndShowMetadataAsText() throws Exception {
    try (ChildProcess p1 = register("shop", "p1", "127.0.0.1:7101", "--zone", "z1", "--tag", "blue");
         ChildProcess p2 = register("shop", "p2", "127.0.0.1:7102", "--version", "v2");
         ChildProcess p3 = register("shop", "p3", "127.0.0.1:7103", "--meta", "note=" + XSS, "--meta", "team=pay");
         ChildProcess console = console("--allow-drain", "--show-leases")) {
      String url = MusterJar.awaitEvent(console, "serving").get("url").asText();
      assertThat(url).contains("/#token=");
      logIn(url); // the printed URL logs in: the page trades the token for a session cookie
      assertThat(driver.getCurrentUrl()).as("the token leaves the address bar").doesNotContain("token");
      js("window.musterMark = 'loaded once';");
      go("#/service/default/shop");

      // three providers appear without a reload
      await("three rows").atMost(Duration.ofSeconds(20)).until(() -> rows().size() == 3);
      assertThat(rows()).containsExactlyInAnyOrder("p1", "p2", "p3");
      js("window.firstRows = Array.from(document.querySelectorAll('main tr[data-id]'));");

      // metadata is user input: it is shown as text, no element and no alert come of it
      assertThat(text("tr[data-id='p3'] td.meta")).contains("note=" + XSS).contains("team=pay");
      assertThat(driver.findElements(By.tagName("img"))).isEmpty();
      assertThatThrownBy(() -> driver.switchTo().alert()).isInstanceOf(NoAlertPresentException.class);
      await("leases").atMost(Duration.ofSeconds(10)).until(() -> text("tr[data-id='p1'] td.ttl").matches("\\d+ s / 3 s"));
      assertThat(text("tr[data-id='p1'] td.lease")).matches("[0-9a-f]+");
      // the leases are read apart from the instances and arrive later: they patch the rows, never replace them
      // (a replaced row takes its Drain button away from under the pointer, and a click on it goes nowhere)
      assertThat(js("return window.firstRows.every(r => r.isConnected);")).as("rows kept").isEqualTo(true);
      shot("service");

      // drain from the page
      driver.findElement(By.cssSelector("tr[data-id='p2'] button.drain")).click();
      await("p2 draining").atMost(Duration.ofSeconds(10))
          .until(() -> text("tr[data-id='p2'] td.state").equals("DRAINING"));
      assertThat(text("#notice")).contains("now DRAINING");
      assertThat(driver.findElements(By.cssSelector("tr[data-id='p2'] button.drain"))).isEmpty();

      // a SIGKILLed provider leaves the page once its 3 s lease expires
      long killed = System.nanoTime();
      p1.kill();
      await("p1 gone").atMost(Duration.ofSeconds(20)).until(() -> rows().size() == 2);
      System.out.printf("console: SIGKILL -> gone from the page %d ms%n", ms(System.nanoTime() - killed));
      assertThat(rows()).containsExactlyInAnyOrder("p2", "p3");

      go("#/");
      await("overview").atMost(Duration.ofSeconds(10)).until(() -> text("main").contains("shop"));
      assertThat(text("tr[data-service='shop']")).contains("DRAINING 1", "UP 1", "v1 1", "v2 1");
      shot("overview");

      go("#/events");
      await("events").atMost(Duration.ofSeconds(10))
          .until(() -> !driver.findElements(By.cssSelector("#events tr[data-type='lease-lost']")).isEmpty());
      assertThat(driver.findElements(By.cssSelector("#events tr[data-type='join']"))).hasSize(3);
      assertThat(driver.findElements(By.cssSelector("#events tr[data-type='drain']"))).hasSize(1);
      shot("events");

      go("#/cluster");
      await("cluster").atMost(Duration.ofSeconds(15)).until(() -> text("main").contains("leader"));
      String leader = Long.toHexString(Long.parseUnsignedLong(etcd.member(0).memberId()));
      assertThat(text("main")).contains("leader " + leader + " (m0)", "No alarm raised.")
          .containsIgnoringCase("DB size / quota 2.0 GiB");
      shot("cluster");

      // etcd gone: the stale banner; back: the banner goes
      go("#/service/default/shop");
      await("rows again").atMost(Duration.ofSeconds(10)).until(() -> rows().size() == 2);
      long down = System.nanoTime();
      etcd.member(0).kill();
      WebElement banner = driver.findElement(By.id("banner")); // never replaced, only shown and hidden
      await("stale banner").atMost(Duration.ofSeconds(30)).until(banner::isDisplayed);
      System.out.printf("console: etcd SIGKILL -> stale banner %d ms%n", ms(System.nanoTime() - down));
      await("stale age").atMost(Duration.ofSeconds(10))
          .until(() -> banner.getText().matches("(?s)etcd unreachable — data stale for [1-9]\\d* s.*"));
      assertThat(rows()).hasSize(2); // the last set is still shown
      shot("stale");
      long up = System.nanoTime();
      etcd.member(0).restart();
      await("banner gone").atMost(Duration.ofSeconds(30)).until(() -> !banner.isDisplayed());
      System.out.printf("console: etcd restarted -> banner gone %d ms%n", ms(System.nanoTime() - up));

      assertThat(js("return window.musterMark;")).as("the page was never reloaded").isEqualTo("loaded once");
      assertThat(console.isAlive()).as("%s", console).isTrue();
      console.terminate();
      assertThat(console.exitCode(EXIT)).isIn(0, 143);
    }
  }

  @Test
  void aReadOnlyConsoleHasNoDrainButtonAndRefusesADrain() throws Exception {
    try (ChildProcess r1 = register("books", "r1", "127.0.0.1:7201");
         ChildProcess console = console()) {
      String printed = MusterJar.awaitEvent(console, "serving").get("url").asText();
      String url = printed.substring(0, printed.indexOf('#'));
      String token = URLDecoder.decode(printed.substring(printed.indexOf("#token=") + 7), StandardCharsets.UTF_8);

      // without the token: the login page, no data; a wrong token is refused on the page; the right one logs in
      driver.get(url + "#/service/default/books");
      await("login form").atMost(Duration.ofSeconds(10)).until(() -> driver.findElement(By.id("login")).isDisplayed());
      assertThat(rows()).isEmpty();
      driver.findElement(By.id("login-token")).sendKeys("wrong-token-0123456789");
      driver.findElement(By.cssSelector("#login button")).click();
      await("refused").atMost(Duration.ofSeconds(10)).until(() -> text("#login-error").contains("wrong token"));
      shot("login");
      driver.findElement(By.id("login-token")).sendKeys(token);
      driver.findElement(By.cssSelector("#login button")).click();
      await("one row").atMost(Duration.ofSeconds(20)).until(() -> rows().size() == 1);
      assertThat(driver.findElement(By.id("login")).isDisplayed()).isFalse();
      assertThat(driver.findElements(By.cssSelector("button.drain"))).isEmpty();
      await("ttl").atMost(Duration.ofSeconds(10)).until(() -> text("tr[data-id='r1'] td.ttl").matches("\\d+ s / 3 s"));
      assertThat(driver.findElements(By.cssSelector("td.lease"))).as("lease ids hidden without --show-leases").isEmpty();

      HttpRequest.Builder drainRequest = HttpRequest.newBuilder(URI.create(url + "api/drain"))
          .header("Origin", url.substring(0, url.length() - 1)).header("Content-Type", "application/json")
          .POST(HttpRequest.BodyPublishers.ofString(
              "{\"namespace\":\"default\",\"service\":\"books\",\"version\":\"v1\",\"id\":\"r1\"}"));
      HttpResponse<String> anonymous = HttpClient.newHttpClient().send(drainRequest.build(),
          HttpResponse.BodyHandlers.ofString());
      assertThat(anonymous.statusCode()).isEqualTo(401);
      HttpResponse<String> drain = HttpClient.newHttpClient().send(drainRequest
          .header("Authorization", "Bearer " + token).build(), HttpResponse.BodyHandlers.ofString());
      assertThat(drain.statusCode()).isEqualTo(403);
      assertThat(drain.body()).contains("read-only");
      HttpResponse<String> page = HttpClient.newHttpClient().send(HttpRequest.newBuilder(URI.create(url)).build(),
          HttpResponse.BodyHandlers.ofString());
      assertThat(page.headers().firstValue("Content-Security-Policy")).hasValue("default-src 'self'");
      assertThat(page.headers().firstValue("X-Content-Type-Options")).hasValue("nosniff");
      assertThat(text("tr[data-id='r1'] td.state")).isEqualTo("UP");
    }
  }

  @Test
  void overTlsAndAuthAReaderSeesTheServiceAndTheRefusedDrainIsShownOnThePage() throws Exception {
    TestPki.Pair root = PKI.client("root");
    try (EtcdAuth auth = EtcdAuth.connect(EtcdConfig.builder().endpoints(secured.endpointsString())
        .tls(PKI.ca(), root.certificate(), root.key()).build())) {
      auth.addUser("viewer", "viewer-secret");
      auth.grantConsumer("default", null, "viewer"); // read on the namespace (not the root: --namespace), no write
    }
    Path password = Files.writeString(DIR.resolve("viewer-password"), "viewer-secret\n");
    TestPki.Pair client = PKI.client("muster-test-client");
    String[] tls = {"--endpoints", secured.endpointsString(), "--cacert", PKI.ca().toString(), "--cert",
        client.certificate().toString(), "--key", client.key().toString()};
    String[] asRoot = {"--endpoints", secured.endpointsString(), "--cacert", PKI.ca().toString(), "--cert",
        root.certificate().toString(), "--key", root.key().toString()};
    try (ChildProcess v1 = MusterJar.start(MusterJar.concat(new String[] {"register", "--service", "vault", "--id",
             "v1", "--address", "127.0.0.1:7301", "--ttl", "3s"}, asRoot));
         ChildProcess console = MusterJar.start(MusterJar.concat(MusterJar.concat(new String[] {"console", "--listen",
             "127.0.0.1:0", "--allow-drain", "--namespace", "default", "--user", "viewer", "--password-file",
             password.toString()}, tls)))) {
      MusterJar.awaitEvent(v1, "registered");
      logIn(MusterJar.awaitEvent(console, "serving").get("url").asText());
      go("#/service/default/vault");
      await("one row").atMost(Duration.ofSeconds(20)).until(() -> rows().size() == 1);
      driver.findElement(By.cssSelector("tr[data-id='v1'] button.drain")).click();
      await("refusal shown").atMost(Duration.ofSeconds(15)).until(() -> text("#notice").startsWith("Drain of v1 failed: "));
      System.out.printf("console: a drain without write permission shows: %s%n", text("#notice"));
      assertThat(text("#notice")).contains("etcd user \"viewer\" may not drain /muster/default/vault/v1/v1",
          "it needs readwrite on /muster/default/vault/");
      assertThat(text("tr[data-id='v1'] td.state")).isEqualTo("UP");
      assertThat(driver.findElement(By.id("banner")).isDisplayed()).isFalse();
      shot("refused-drain");
    }
  }

  @Test
  void badFlagsExitTwoWithOneLine() {
    for (String[] bad : List.of(new String[] {"--listen", "localhost:8080"}, new String[] {"--quota", "2XB"},
        new String[] {"--namespace", "Bad_ns"})) {
      try (ChildProcess p = MusterJar.run(EXIT, MusterJar.concat(MusterJar.concat(new String[] {"console"}, bad),
          "--endpoints", etcd.endpointsString()))) {
        assertThat(p.exitCode().getAsInt()).as("%s", p).isEqualTo(2);
        assertThat(p.stderr()).as("%s", p).hasSize(1);
        assertThat(p.stderr().get(0)).startsWith("muster: ").contains(bad[1]);
      }
    }
  }

  @Test
  void aTokenFileOthersMayReadIsRefusedWithTheChmodThatFixesIt() throws IOException {
    Path file = Files.writeString(DIR.resolve("console-token"), "0123456789abcdef0123456789abcdef\n");
    Files.setPosixFilePermissions(file, PosixFilePermissions.fromString("rw-r--r--"));
    try (ChildProcess p = MusterJar.run(EXIT, "console", "--listen", "127.0.0.1:0", "--token-file", file.toString(),
        "--endpoints", etcd.endpointsString())) {
      assertThat(p.exitCode().getAsInt()).as("%s", p).isEqualTo(2);
      assertThat(p.stderr()).as("%s", p).hasSize(1);
      assertThat(p.stderr().get(0)).startsWith("muster: --token-file").contains("chmod 600 " + file);
    }
  }

  /**
   * Headers sent a line a second (slowloris) are cut off by the JDK server's request deadline, which the console
   * process sets from {@code --read-timeout} before its server starts (ConsoleAccessIT's in-process console cannot
   * show this: the JDK reads the deadline once per JVM).
   */
  @Test
  void headersSentALineASecondAreCutOff() throws Exception {
    try (ChildProcess console = console("--read-timeout", "1s")) {
      int port = MusterJar.awaitEvent(console, "serving").get("port").asInt();
      int lines = 30;
      AtomicInteger sent = new AtomicInteger();
      try (Socket s = new Socket("127.0.0.1", port)) {
        OutputStream out = s.getOutputStream();
        out.write(("GET / HTTP/1.1\r\nHost: 127.0.0.1:" + port + "\r\n").getBytes(StandardCharsets.US_ASCII));
        Thread slow = new Thread(() -> {
          try {
            for (int i = 0; i < lines; i++) {
              out.write(("X-Slow-" + i + ": 1\r\n").getBytes(StandardCharsets.US_ASCII));
              out.flush();
              sent.incrementAndGet();
              Thread.sleep(1000);
            }
            out.write("\r\n".getBytes(StandardCharsets.US_ASCII));
            out.flush();
          } catch (IOException | InterruptedException e) {
            // cut off: what the test waits for
          }
        }, "slow-headers");
        slow.setDaemon(true);
        slow.start();
        byte[] answer;
        try {
          answer = s.getInputStream().readAllBytes();
        } catch (IOException reset) {
          answer = new byte[0];
        }
        slow.interrupt();
        assertThat(new String(answer, StandardCharsets.UTF_8)).as("no answer").doesNotContain("HTTP/1.1 200");
        assertThat(sent.get()).as("cut off before the headers ended").isLessThan(lines);
      }
    }
  }

  /** Opens the URL {@code muster console} printed and waits until the page, logged in, streams. */
  private static void logIn(String printedUrl) {
    driver.get(printedUrl);
    await("logged in").atMost(Duration.ofSeconds(20)).until(() -> text("#conn").equals("live"));
  }

  private ChildProcess register(String service, String id, String address, String... more) {
    List<String> args = new ArrayList<>(List.of("register", "--service", service, "--id", id, "--address", address,
        "--ttl", "3s"));
    args.addAll(List.of(more));
    args.addAll(List.of("--endpoints", etcd.endpointsString()));
    ChildProcess p = MusterJar.start(args.toArray(String[]::new));
    MusterJar.awaitEvent(p, "registered");
    return p;
  }

  private ChildProcess console(String... more) {
    return MusterJar.start(MusterJar.concat(MusterJar.concat(new String[] {"console", "--listen", "127.0.0.1:0"},
        more), "--endpoints", etcd.endpointsString()));
  }

  /** The instance ids on the service page, read in one script (the page may patch itself between two calls). */
  @SuppressWarnings("unchecked")
  private static List<String> rows() {
    return (List<String>) js("return Array.from(document.querySelectorAll('main tr[data-id]'), r => r.dataset.id);");
  }

  /** The rendered text of the first element matching {@code css}, or "" (one script: no stale element). */
  private static String text(String css) {
    return (String) js("const e = document.querySelector(arguments[0]); return e ? e.innerText : '';", css);
  }

  /** A hash change: the same document, no reload. */
  private static void go(String hash) {
    js("location.hash = arguments[0];", hash);
  }

  private static Object js(String script, Object... args) {
    return ((JavascriptExecutor) driver).executeScript(script, args);
  }

  private static void shot(String page) throws IOException {
    Files.write(SHOTS.resolve("console-" + page + ".png"), driver.getScreenshotAs(OutputType.BYTES));
  }

  private static Set<ProcessHandle> children() {
    Set<ProcessHandle> out = new HashSet<>();
    ProcessHandle.current().children().forEach(out::add);
    return out;
  }

  private static long ms(long nanos) {
    return TimeUnit.NANOSECONDS.toMillis(nanos);
  }
}
