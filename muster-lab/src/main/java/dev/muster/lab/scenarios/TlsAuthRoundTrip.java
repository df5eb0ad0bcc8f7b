package dev.muster.lab.scenarios;

import dev.muster.etcd.EtcdAuth;
import dev.muster.etcd.EtcdConfig;
import dev.muster.lab.Figures;
import dev.muster.lab.Fleet;
import dev.muster.lab.LabContext;
import dev.muster.lab.LabException;
import dev.muster.lab.Scenario;
import dev.muster.lab.ScenarioResult;
import dev.muster.registry.Instance;
import dev.muster.testing.ChildProcess;
import dev.muster.testing.EtcdCluster;
import dev.muster.testing.LoopbackPorts;
import dev.muster.testing.TestPki;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;

/**
 * graceful_stop_revokes_lease and kill9_stale_window on a secured registry, with their checks: one etcd member
 * serving clients and peers over TLS only and requiring client certificates, with etcd authentication on. As root
 * (by its client certificate) the lab creates a provider user that may register the service and a consumer user that
 * may only read it. The providers log in by certificate (CN = the provider user); A, B and the watcher by password,
 * over a certificate whose CN is no etcd user, so only the password grants them anything. Then SIGTERM one provider
 * (drain 0: its revoke reaches the watcher at once), SIGKILL another (gone when its lease expires), and finally try
 * to register with the consumer's credentials, which etcd must refuse (exit 5).
 */
public final class TlsAuthRoundTrip implements Scenario {
  private static final String SERVICE = "hello";
  private static final String PROVIDER_USER = "hello-provider";
  private static final String CONSUMER_USER = "hello-consumer";
  /** The CN of the consumers' certificate: no etcd user, so it carries no permission of its own. */
  private static final String TLS_ONLY_CN = "lab-tls-only";
  private static final int REFUSED = 5;
  private static final Duration REFUSAL_LIMIT = Duration.ofSeconds(30);

  @Override
  public String name() {
    return "tls_auth_round_trip";
  }

  @Override
  public String shows() {
    return "TLS + client certs + etcd auth: SIGTERM revokes, SIGKILL expires, a consumer cannot register";
  }

  @Override
  public String seed() {
    return "not in the seed: graceful_stop_revokes_lease's and kill9_stale_window's figures, over TLS and auth";
  }

  @Override
  public ScenarioResult run(LabContext ctx) {
    TestPki pki = TestPki.create(ctx.dir().resolve("pki"));
    EtcdCluster etcd = ctx.etcd(EtcdCluster.builder().members(1).tls(pki).auth());
    Path consumerPassword = grantRoles(ctx, etcd, pki);
    List<String> providerFlags = new ArrayList<>(List.of("--drain", "0s"));
    providerFlags.addAll(tlsFlags(pki, PROVIDER_USER));
    List<String> consumerFlags = new ArrayList<>(tlsFlags(pki, TLS_ONLY_CN));
    consumerFlags.addAll(List.of("--user", CONSUMER_USER, "--password-file", consumerPassword.toString()));
    String[] consumer = consumerFlags.toArray(String[]::new);

    Fleet f = Fleet.providers(ctx, SERVICE, etcd.endpointsString(), 3, providerFlags.toArray(String[]::new))
        .consumers(ctx, etcd.endpointsString(), true, true, true, consumer);
    GracefulStopCheck stop = GracefulStopCheck.run(ctx, f, f.provider(1));
    ctx.note("SIGTERM p1: " + stop.summary());
    Kill9Check kill9 = Kill9Check.run(ctx, f, f.provider(2));
    ctx.note("SIGKILL p2: " + kill9.summary());
    ChildProcess intruder = registerWith(ctx, etcd, consumer);
    int refused = intruder.exitCode().orElseThrow();
    ctx.note("register as " + CONSUMER_USER + ": exit " + refused + ", " + intruder.stderr().stream().findFirst()
        .orElse("no message"));

    boolean pass = stop.passed() && kill9.passed() && refused == REFUSED;
    return ScenarioResult.of(this, pass, Figures.withWindows(String.format("SIGTERM p1: %s; SIGKILL p2: %s;"
            + " register as %s: exit %d", stop.summary(), kill9.summary(), CONSUMER_USER, refused),
        List.of(kill9.window())), "providers by certificate, consumers by password, over mutual TLS; SIGTERM: "
        + GracefulStopCheck.INVARIANT + "; SIGKILL: " + Kill9Check.INVARIANT + "; the consumer's credentials cannot"
        + " register (exit " + REFUSED + ")");
  }

  /**
   * As root: the provider user (it logs in by certificate, but etcd 3.4 still wants a user with a password) with
   * grant-provider, the consumer user with grant-consumer. Returns the file holding the consumer's password.
   */
  private static Path grantRoles(LabContext ctx, EtcdCluster etcd, TestPki pki) {
    TestPki.Pair root = pki.client("root");
    String consumerPassword = UUID.randomUUID().toString();
    Path file = writeSecret(ctx.dir().resolve(CONSUMER_USER + ".password"), consumerPassword);
    EtcdConfig asRoot = EtcdConfig.builder().endpoints(etcd.endpointsString())
        .tls(pki.ca(), root.certificate(), root.key()).build();
    List<EtcdAuth.Change> changes = new ArrayList<>();
    try (EtcdAuth auth = EtcdAuth.connect(asRoot)) {
      changes.addAll(auth.addUser(PROVIDER_USER, UUID.randomUUID().toString()));
      changes.addAll(auth.grantProvider(Instance.DEFAULT_NAMESPACE, SERVICE, PROVIDER_USER, null));
      changes.addAll(auth.addUser(CONSUMER_USER, consumerPassword));
      changes.addAll(auth.grantConsumer(Instance.DEFAULT_NAMESPACE, SERVICE, CONSUMER_USER));
    }
    ctx.mark("auth", changes.size() + " changes as root: " + changes);
    return file;
  }

  /** {@code muster register} for the service with {@code flags}, run to its exit. */
  private static ChildProcess registerWith(LabContext ctx, EtcdCluster etcd, String... flags) {
    List<String> args = new ArrayList<>(List.of("register", "--service", SERVICE, "--id", "intruder", "--address",
        "127.0.0.1:" + LoopbackPorts.pick(), "--endpoints", etcd.endpointsString()));
    args.addAll(List.of(flags));
    ChildProcess p = ctx.start("intruder", args.toArray(String[]::new));
    if (!p.awaitExit(REFUSAL_LIMIT)) {
      throw new LabException("register with the consumer's credentials still runs after "
          + REFUSAL_LIMIT.toSeconds() + " s: etcd let it write (" + p + ")");
    }
    return p;
  }

  private static List<String> tlsFlags(TestPki pki, String commonName) {
    TestPki.Pair pair = pki.client(commonName);
    return List.of("--cacert", pki.ca().toString(), "--cert", pair.certificate().toString(), "--key",
        pair.key().toString());
  }

  private static Path writeSecret(Path file, String secret) {
    try {
      Files.writeString(file, secret + "\n");
      Files.setPosixFilePermissions(file, PosixFilePermissions.fromString("rw-------"));
      return file;
    } catch (IOException e) {
      throw new UncheckedIOException("cannot write " + file + ": " + e.getMessage(), e);
    }
  }
}
