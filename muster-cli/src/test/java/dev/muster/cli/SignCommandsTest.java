package dev.muster.cli;

import static org.assertj.core.api.Assertions.assertThat;

import dev.muster.sign.SigningKey;
import dev.muster.sign.TrustedKey;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** {@code muster keygen}, and every bad key file given to --sign-key and --trust-key: one line, exit 2. */
class SignCommandsTest {
  private final StringWriter out = new StringWriter();
  private final StringWriter err = new StringWriter();

  @TempDir
  Path dir;

  private int run(String... args) {
    return Main.run(args, new PrintWriter(out, true), new PrintWriter(err, true));
  }

  private String errorLine() {
    String text = err.toString().strip();
    assertThat(text).as("one line on stderr").doesNotContain("\n").startsWith("muster: ");
    return text;
  }

  @Test
  void keygenWritesAPrivateKeyOnlyItsOwnerCanReadAndThePublicKeyAndPrintsTheKeyId() throws Exception {
    Path base = dir.resolve("orders");

    assertThat(run("keygen", "--out", base.toString())).as("%s", err).isZero();

    Path key = dir.resolve("orders.key");
    Path pub = dir.resolve("orders.pub");
    assertThat(PosixFilePermissions.toString(Files.getPosixFilePermissions(key))).isEqualTo("rw-------");
    String keyId = TrustedKey.read(pub).keyId();
    assertThat(SigningKey.read(key).keyId()).isEqualTo(keyId);
    assertThat(out.toString().lines().findFirst()).contains("key id " + keyId);
    assertThat(out.toString()).contains("--sign-key " + key).contains("--trust-key " + pub);
  }

  @Test
  void keygenNeverOverwritesAndWritesNothingWhenEitherFileExists() throws Exception {
    Path base = dir.resolve("orders");
    assertThat(run("keygen", "--out", base.toString())).isZero();
    String key = Files.readString(dir.resolve("orders.key"));

    assertThat(run("keygen", "--out", base.toString())).isEqualTo(2);
    assertThat(errorLine()).contains(dir.resolve("orders.key") + " already exists")
        .contains("choose another --out");
    assertThat(Files.readString(dir.resolve("orders.key"))).isEqualTo(key);

    Files.writeString(dir.resolve("billing.pub"), "mine");
    err.getBuffer().setLength(0);
    assertThat(run("keygen", "--out", dir.resolve("billing").toString())).isEqualTo(2);
    assertThat(errorLine()).contains("billing.pub already exists");
    assertThat(dir.resolve("billing.key")).doesNotExist();
  }

  @Test
  void keygenIntoAMissingDirectoryIsOneLine() {
    assertThat(run("keygen", "--out", dir.resolve("no/such/dir/k").toString())).isEqualTo(2);
    assertThat(errorLine()).contains("directory " + dir.resolve("no/such/dir") + " does not exist");
  }

  @Test
  void registerRefusesAPublicKeyAsItsSigningKeyBeforeContactingEtcd() throws Exception {
    assertThat(run("keygen", "--out", dir.resolve("k").toString())).isZero();
    err.getBuffer().setLength(0);

    assertThat(run("register", "--service", "orders", "--address", "127.0.0.1:9000", "--endpoints",
        "http://127.0.0.1:1", "--sign-key", dir.resolve("k.pub").toString())).isEqualTo(2);
    assertThat(errorLine()).contains("signingKey \"" + dir.resolve("k.pub") + "\" is invalid: it holds a public key");
  }

  @Test
  void registerRefusesAMissingKeyFile() {
    assertThat(run("register", "--service", "orders", "--address", "127.0.0.1:9000", "--endpoints",
        "http://127.0.0.1:1", "--sign-key", dir.resolve("nope.key").toString())).isEqualTo(2);
    assertThat(errorLine()).contains(dir.resolve("nope.key").toString()).contains("no such file");
  }

  @Test
  void watchRefusesAPrivateKeyToTrust() throws Exception {
    assertThat(run("keygen", "--out", dir.resolve("k").toString())).isZero();
    err.getBuffer().setLength(0);

    assertThat(run("watch", "orders", "--endpoints", "http://127.0.0.1:1", "--trust-key",
        dir.resolve("k.pub").toString(), "--trust-key", dir.resolve("k.key").toString())).isEqualTo(2);
    assertThat(errorLine()).contains("trustedKey \"" + dir.resolve("k.key") + "\" is invalid: it holds a private key");
  }

  @Test
  void callRefusesAFileThatIsNotPem() throws Exception {
    Path notPem = Files.writeString(dir.resolve("notes.txt"), "hello");

    assertThat(run("call", "orders", "/hello", "--endpoints", "http://127.0.0.1:1", "--trust-key",
        notPem.toString())).isEqualTo(2);
    assertThat(errorLine()).contains(notPem.toString()).contains("not a PEM file");
  }
}
