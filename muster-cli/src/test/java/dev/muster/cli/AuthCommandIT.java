package dev.muster.cli;

import static org.assertj.core.api.Assertions.assertThat;

import dev.muster.testing.ChildProcess;
import dev.muster.testing.EtcdCluster;
import dev.muster.testing.TempDirs;
import dev.muster.testing.TestPki;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.MethodOrderer;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestMethodOrder;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * {@code muster auth} and every refusal as the command line shows it: real {@code muster.jar} processes against
 * an etcd with TLS, client certificates and authentication on. Roles are made with {@code muster auth} as root
 * (root by its certificate); each refusal is one line on stderr and exit 5, and leaves nothing registered.
 */
@Timeout(value = 4, unit = TimeUnit.MINUTES)
@TestMethodOrder(MethodOrderer.OrderAnnotation.class)
class AuthCommandIT {
  private static final Path DIR = TempDirs.create("muster-auth-cli-");
  private static final TestPki PKI = TestPki.create(DIR.resolve("pki"));
  private static final Duration EXIT = Duration.ofSeconds(40);

  @RegisterExtension
  static EtcdCluster etcd = EtcdCluster.builder().members(1).tls(PKI).auth().build();

  private static Path password;

  @BeforeAll
  static void files() throws IOException {
    password = Files.writeString(DIR.resolve("password"), "users-secret\n");
  }

  /** TLS flags with {@code cn}'s certificate; add {@code --user} for password users. */
  private static List<String> tls(String cn) {
    TestPki.Pair cert = PKI.client(cn);
    return List.of("--endpoints", etcd.endpointsString(), "--cacert", PKI.ca().toString(), "--cert",
        cert.certificate().toString(), "--key", cert.key().toString());
  }

  private static List<String> as(String user) {
    List<String> flags = new ArrayList<>(tls("muster-test-client"));
    flags.addAll(List.of("--user", user, "--password-file", password.toString()));
    return flags;
  }

  private static ChildProcess run(List<String> command, List<String> flags) {
    List<String> args = new ArrayList<>(command);
    args.addAll(flags);
    return MusterJar.run(EXIT, args.toArray(String[]::new));
  }

  private static ChildProcess root(String... command) {
    ChildProcess p = run(List.of(command), tls("root"));
    assertThat(p.exitCode().getAsInt()).as("%s", p).isZero();
    return p;
  }

  @Test
  @Order(1)
  void rootSetsUpRolesIdempotentlyAndPrintsWhatItChanged() {
    assertThat(root("auth", "enable").stdout()).containsExactly("nothing to change");
    for (String user : new String[] {"pa", "ca", "p1", "p2"}) {
      root("auth", "add-user", user, "--new-password-file", password.toString());
    }
    assertThat(root("auth", "grant-provider", "orders", "pa").stdout()).containsExactly(
        "created role muster-provider:/muster/default/orders/",
        "granted readwrite on /muster/default/orders/ (prefix) to role muster-provider:/muster/default/orders/",
        "granted role muster-provider:/muster/default/orders/ to user pa");
    assertThat(root("auth", "grant-provider", "orders", "pa").stdout()).containsExactly("nothing to change");
    root("auth", "grant-consumer", "orders", "ca");
    root("auth", "grant-provider", "orders", "p1", "--instance", "i1");
    root("auth", "grant-provider", "orders", "p2", "--instance", "i2");
    assertThat(root("auth", "ls").stdout()).contains("authentication enabled",
        "user p1: muster-provider:/muster/default/orders/v1/i1",
        "role muster-consumer:/muster/default/orders/: read /muster/default/orders/ (prefix)");
  }

  @Test
  @Order(2)
  void aProviderOfOrdersCannotRegisterBilling() {
    try (ChildProcess p = run(List.of("register", "--service", "billing", "--address", "127.0.0.1:9001", "--id",
        "x"), as("pa"))) {
      assertRefused(p, "etcd user \"pa\" may not write /muster/default/billing/v1/x");
    }
    assertNothingUnder("billing");
  }

  @Test
  @Order(3)
  void aConsumerCannotRegisterNorReadAServiceItWasNotGranted() {
    try (ChildProcess p = run(List.of("register", "--service", "orders", "--address", "127.0.0.1:9001", "--id",
        "c"), as("ca"))) {
      assertRefused(p, "etcd user \"ca\" may not write");
    }
    try (ChildProcess ls = run(List.of("ls", "orders"), as("ca"))) {
      assertThat(ls.exitCode().getAsInt()).as("%s", ls).isZero();
    }
    try (ChildProcess ls = run(List.of("ls", "billing"), as("ca"))) {
      assertRefused(ls, "needs read on /muster/default/billing/");
    }
    try (ChildProcess watch = run(List.of("watch", "billing"), as("ca"))) {
      assertRefused(watch, "may not watch /muster/default/billing/");
    }
  }

  @Test
  @Order(4)
  void aPerInstanceGrantCannotTakeAnotherProvidersId() throws Exception {
    try (ChildProcess two = MusterJar.start(concat(List.of("register", "--service", "orders", "--address",
        "127.0.0.1:9002", "--id", "i2", "--ttl", "3s"), as("p2")))) {
      org.awaitility.Awaitility.await().atMost(Duration.ofSeconds(30))
          .until(() -> two.json().eventNames().contains("registered") || !two.isAlive());
      assertThat(two.json().eventNames()).as("%s", two).contains("registered");
      try (ChildProcess one = run(List.of("register", "--service", "orders", "--address", "127.0.0.1:9001", "--id",
          "i2"), as("p1"))) {
        assertRefused(one, "etcd user \"p1\" may not write /muster/default/orders/v1/i2");
      }
      try (ChildProcess ls = run(List.of("ls", "orders", "--json"), tls("root"))) {
        assertThat(ls.stdout()).singleElement().asString().contains("\"id\":\"i2\"").contains("127.0.0.1")
            .contains("9002");
      }
    }
  }

  @Test
  @Order(5)
  void wrongCredentialsAreOneLineAndExitFive() throws IOException {
    Path wrong = Files.writeString(DIR.resolve("wrong"), "not-the-password\n");
    List<String> wrongPassword = new ArrayList<>(tls("muster-test-client"));
    wrongPassword.addAll(List.of("--user", "pa", "--password-file", wrong.toString()));
    try (ChildProcess p = run(List.of("register", "--service", "orders", "--address", "127.0.0.1:9001", "--id",
        "w"), wrongPassword)) {
      assertRefused(p, "etcd did not accept etcd user \"pa\"");
      assertThat(String.join("\n", p.stderr()) + String.join("\n", p.stdout())).doesNotContain("not-the-password");
    }
    TestPki.Pair expired = PKI.expiredClient("pa");
    try (ChildProcess p = run(List.of("register", "--service", "orders", "--address", "127.0.0.1:9001", "--id",
        "e"), List.of("--endpoints", etcd.endpointsString(), "--cacert", PKI.ca().toString(), "--cert",
        expired.certificate().toString(), "--key", expired.key().toString()))) {
      assertRefused(p, "etcd refused the TLS handshake");
    }
    // A refusal is immediate, but on a loaded machine the JVM's first TLS handshake alone once took longer than the
    // request timeout (2 s then), and ls reported "did not answer" (exit 4): give it time to be refused.
    try (ChildProcess p = run(List.of("ls", "orders", "--request-timeout", "20s"), List.of("--endpoints",
        etcd.endpointsString(), "--cacert", PKI.otherCa().toString(), "--cert", PKI.client("pa").certificate()
        .toString(), "--key", PKI.client("pa").key().toString()))) {
      assertRefused(p, "etcd's certificate was not accepted");
    }
    try (ChildProcess ls = run(List.of("ls", "orders", "--json"), tls("root"))) {
      assertThat(ls.stdout()).noneMatch(l -> l.contains("\"id\":\"w\"") || l.contains("\"id\":\"e\""));
    }
  }

  @Test
  @Order(6)
  void aPasswordFlagDoesNotExist() {
    try (ChildProcess p = MusterJar.run(EXIT, "ls", "--user", "pa", "--password", "x")) {
      assertThat(p.exitCode().getAsInt()).isEqualTo(2);
      assertThat(p.stderr()).singleElement().asString().contains("--password");
    }
  }

  private static void assertRefused(ChildProcess p, String text) {
    assertThat(p.exitCode().getAsInt()).as("%s", p).isEqualTo(5);
    assertThat(p.stderr()).as("%s", p).singleElement().asString().startsWith("muster: ").contains(text);
    System.out.println("[auth cli IT] " + p.stderr().get(0));
  }

  private static void assertNothingUnder(String service) {
    try (ChildProcess ls = run(List.of("ls", service), tls("root"))) {
      assertThat(ls.stdout().get(0)).as("%s", ls).endsWith(", 0 instance(s)");
    }
  }

  private static String[] concat(List<String> a, List<String> b) {
    List<String> all = new ArrayList<>(a);
    all.addAll(b);
    return all.toArray(String[]::new);
  }
}
