package dev.muster.testing;

import dev.muster.testing.internal.PemSsl;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import javax.net.ssl.SSLContext;

/**
 * A throw-away certificate authority for tests, made with the installed {@code openssl} (Debian's; nothing is
 * fetched from the network): a CA, a server certificate for {@code 127.0.0.1} and {@code localhost} (client and
 * peer TLS of the etcd members), and client certificates whose common name is an etcd user (etcd maps the CN to
 * the user under {@code --client-cert-auth}). Keys are EC P-256 in unencrypted PKCS#8 PEM, which both etcd and
 * Netty read.
 *
 * <p>Not thread-safe; make one per test class or cluster.
 */
public final class TestPki {
  private static final Duration OPENSSL_LIMIT = Duration.ofSeconds(30);

  private final Path dir;

  /** A certificate and its key, as PEM files. */
  public record Pair(Path certificate, Path key) {}

  private TestPki(Path dir) {
    this.dir = dir;
  }

  /** Creates the CA and the server certificate under {@code dir}. */
  public static TestPki create(Path dir) {
    Objects.requireNonNull(dir, "dir");
    try {
      Files.createDirectories(dir);
    } catch (IOException e) {
      throw new UncheckedIOException("cannot create " + dir + " for test certificates: " + e.getMessage(), e);
    }
    TestPki pki = new TestPki(dir);
    pki.selfSigned("ca", "muster-test-ca");
    pki.issue("server", "etcd-server", "subjectAltName=IP:127.0.0.1,DNS:localhost\n"
        + "extendedKeyUsage=serverAuth,clientAuth");
    return pki;
  }

  /** The CA certificate clients and members trust. */
  public Path ca() {
    return dir.resolve("ca.pem");
  }

  /** The members' certificate (server and peer), valid for 127.0.0.1 and localhost. */
  public Pair server() {
    return new Pair(dir.resolve("server.pem"), dir.resolve("server-key.pem"));
  }

  /**
   * A JDK {@link SSLContext} for a TLS server on 127.0.0.1 or localhost (e.g. the JDK's {@code HttpsServer}):
   * presents {@link #server()} and trusts the CA.
   */
  public SSLContext serverContext() {
    Pair server = server();
    return PemSsl.context(ca(), server.certificate(), server.key());
  }

  /** A JDK {@link SSLContext} for a TLS client that trusts this CA only and presents no certificate. */
  public SSLContext clientContext() {
    return PemSsl.trusting(ca());
  }

  /** A client certificate whose common name is {@code commonName} (an etcd user under client-cert auth). */
  public Pair client(String commonName) {
    Pair existing = new Pair(dir.resolve("client-" + commonName + ".pem"),
        dir.resolve("client-" + commonName + "-key.pem"));
    if (Files.isRegularFile(existing.certificate())) {
      return existing;
    }
    return issue("client-" + commonName, commonName, "extendedKeyUsage=clientAuth");
  }

  /**
   * A client certificate for {@code commonName}, signed by the CA, that expired in January 2020 (for "expired
   * certificate" tests). Made with {@code openssl ca}, which alone in OpenSSL 3.0 takes explicit dates.
   */
  public Pair expiredClient(String commonName) {
    String name = "expired-" + commonName;
    Pair pair = new Pair(dir.resolve(name + ".pem"), dir.resolve(name + "-key.pem"));
    if (Files.isRegularFile(pair.certificate())) {
      return pair;
    }
    Path db = dir.resolve("ca-db");
    Path csr = dir.resolve(name + ".csr");
    Path ext = dir.resolve(name + ".ext");
    Path conf = dir.resolve("ca-db.cnf");
    try {
      Files.createDirectories(db.resolve("new"));
      if (!Files.exists(db.resolve("index.txt"))) {
        Files.writeString(db.resolve("index.txt"), "");
        Files.writeString(db.resolve("serial"), "01\n");
      }
      Files.writeString(ext, "extendedKeyUsage=clientAuth\n");
      Files.writeString(conf, "[ca]\ndefault_ca = test\n[test]\ndatabase = " + db.resolve("index.txt")
          + "\nnew_certs_dir = " + db.resolve("new") + "\nserial = " + db.resolve("serial")
          + "\ndefault_md = sha256\npolicy = any\nunique_subject = no\n[any]\ncommonName = supplied\n");
    } catch (IOException e) {
      throw new UncheckedIOException("cannot write the openssl ca files under " + dir + ": " + e.getMessage(), e);
    }
    openssl(name + "-key", "genpkey", "-algorithm", "EC", "-pkeyopt", "ec_paramgen_curve:prime256v1",
        "-out", pair.key().toString());
    openssl(name + "-csr", "req", "-new", "-key", pair.key().toString(), "-out", csr.toString(), "-subj",
        "/CN=" + commonName);
    openssl(name + "-sign", "ca", "-batch", "-config", conf.toString(), "-cert", ca().toString(), "-keyfile",
        dir.resolve("ca-key.pem").toString(), "-in", csr.toString(), "-out", pair.certificate().toString(),
        "-startdate", "20200101000000Z", "-enddate", "20200102000000Z", "-extfile", ext.toString(), "-notext");
    return pair;
  }

  /** A second, unrelated CA (for "wrong CA" tests): its certificate only. */
  public Path otherCa() {
    Path other = dir.resolve("other-ca.pem");
    if (!Files.isRegularFile(other)) {
      selfSigned("other-ca", "not-the-muster-test-ca");
    }
    return other;
  }

  /** A self-signed CA certificate {@code name.pem} with its key {@code name-key.pem}, valid two days. */
  private void selfSigned(String name, String commonName) {
    openssl(name, "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes",
        "-keyout", dir.resolve(name + "-key.pem").toString(), "-out", dir.resolve(name + ".pem").toString(),
        "-days", "2", "-subj", "/CN=" + commonName);
  }

  private Pair issue(String name, String commonName, String extensions) {
    Path key = dir.resolve(name + "-key.pem");
    Path csr = dir.resolve(name + ".csr");
    Path cert = dir.resolve(name + ".pem");
    Path ext = dir.resolve(name + ".ext");
    try {
      Files.writeString(ext, extensions + "\n");
    } catch (IOException e) {
      throw new UncheckedIOException("cannot write " + ext + ": " + e.getMessage(), e);
    }
    openssl(name + "-key", "genpkey", "-algorithm", "EC", "-pkeyopt", "ec_paramgen_curve:prime256v1",
        "-out", key.toString());
    openssl(name + "-csr", "req", "-new", "-key", key.toString(), "-out", csr.toString(), "-subj", "/CN=" + commonName);
    openssl(name + "-sign", "x509", "-req", "-in", csr.toString(), "-CA", ca().toString(), "-CAkey",
        dir.resolve("ca-key.pem").toString(), "-CAcreateserial", "-out", cert.toString(), "-days", "2",
        "-extfile", ext.toString());
    return new Pair(cert, key);
  }

  private void openssl(String step, String... args) {
    List<String> command = new ArrayList<>();
    command.add("openssl");
    command.addAll(List.of(args));
    try (ChildProcess p = ChildProcess.start("openssl-" + step, command, dir.resolve(step + ".out"),
        dir.resolve(step + ".err"))) {
      int code = p.exitCode(OPENSSL_LIMIT);
      if (code != 0) {
        throw new EtcdLaunchException("openssl failed making the test certificates (" + step + ", exit " + code
            + "): " + p.stderrTail());
      }
    }
  }
}
