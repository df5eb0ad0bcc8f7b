package dev.muster.sign;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.muster.InvalidInputException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.security.KeyPair;
import java.security.KeyPairGenerator;
import java.util.stream.Stream;
import org.junit.jupiter.api.Nested;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/** Reading, writing and identifying keys: {@link SigningKey} and {@link TrustedKey}, and what bad files say. */
class KeysTest {
  /** Written by {@code openssl genpkey -algorithm ed25519} (OpenSSL 3.0). */
  static final String OPENSSL_PRIVATE = """
      -----BEGIN PRIVATE KEY-----
      MC4CAQAwBQYDK2VwBCIEIGUfCGS/nX3uLslfd0ACPRYKh9mU7oTnAHfYmnYqtivu
      -----END PRIVATE KEY-----
      """;

  /** {@code openssl pkey -in openssl.key -pubout} of the key above. */
  static final String OPENSSL_PUBLIC = """
      -----BEGIN PUBLIC KEY-----
      MCowBQYDK2VwAyEAZ833pXZPdeuKpkxzC1uCH6yXPQxZAFKP3OEzfH51U3Q=
      -----END PUBLIC KEY-----
      """;

  /** {@code openssl pkey -pubin -in openssl.pub -outform DER | sha256sum | cut -c1-16}. */
  static final String OPENSSL_KEY_ID = "5b58f33094e0ab5e";

  @TempDir
  Path dir;

  @Test
  void anOpensslKeyIsReadWithThePublicHalfAndTheKeyIdThatOpensslComputes() {
    SigningKey key = SigningKey.parse(OPENSSL_PRIVATE);
    TrustedKey trusted = TrustedKey.parse(OPENSSL_PUBLIC);

    assertThat(trusted.keyId()).isEqualTo(OPENSSL_KEY_ID);
    assertThat(key.keyId()).isEqualTo(OPENSSL_KEY_ID);
    assertThat(key.trustedKey()).isEqualTo(trusted);
    assertThat(trusted.toPem()).isEqualTo(OPENSSL_PUBLIC);
    assertThat(key.toPem()).isEqualTo(OPENSSL_PRIVATE);
  }

  @Test
  void aGeneratedKeyRoundTripsThroughItsPemFiles() throws Exception {
    SigningKey key = SigningKey.generate();
    Files.writeString(dir.resolve("k.key"), key.toPem());
    Files.setPosixFilePermissions(dir.resolve("k.key"), PosixFilePermissions.fromString("rw-------"));
    Files.writeString(dir.resolve("k.pub"), key.trustedKey().toPem());

    SigningKey read = SigningKey.read(dir.resolve("k.key"));
    TrustedKey trusted = TrustedKey.read(dir.resolve("k.pub"));

    assertThat(read).isEqualTo(key);
    assertThat(read.keyId()).isEqualTo(key.keyId()).matches("[0-9a-f]{16}");
    assertThat(trusted).isEqualTo(key.trustedKey());
    assertThat(SigningKey.generate().keyId()).isNotEqualTo(key.keyId());
  }

  @Test
  void aPublicKeyOfSmallOrderIsRefusedBeforeAnythingIsVerifiedWithIt() {
    // The identity point (y = 1): JDK 17 decodes it as an Ed25519 key, and "signatures" of it are trivial to forge.
    byte[] spki = java.util.HexFormat.of().parseHex("302a300506032b6570032100" + "01" + "00".repeat(31));
    String pem = "-----BEGIN PUBLIC KEY-----\n" + java.util.Base64.getEncoder().encodeToString(spki)
        + "\n-----END PUBLIC KEY-----\n";

    assertThatThrownBy(() -> TrustedKey.parse(pem)).isInstanceOfSatisfying(InvalidInputException.class, e -> {
      assertThat(e.field()).isEqualTo("trustedKey");
      assertThat(e.getMessage()).contains("not a point of full order").doesNotContain("\n");
    });
  }

  @Test
  void toStringShowsOnlyTheKeyId() {
    SigningKey key = SigningKey.parse(OPENSSL_PRIVATE);
    assertThat(key.toString()).isEqualTo("SigningKey[" + OPENSSL_KEY_ID + "]");
    assertThat(key.trustedKey().toString()).isEqualTo("TrustedKey[" + OPENSSL_KEY_ID + "]");
  }

  static Stream<Arguments> badPemTexts() {
    return Stream.of(
        Arguments.of("a public key given to sign", true, OPENSSL_PUBLIC, "it holds a public key"),
        Arguments.of("a private key given to trust", false, OPENSSL_PRIVATE, "it holds a private key"),
        Arguments.of("another PEM block", false, "-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n",
            "it holds a PEM \"CERTIFICATE\""),
        Arguments.of("bad base64", true, "-----BEGIN PRIVATE KEY-----\n%%%not base64%%%\n-----END PRIVATE KEY-----\n",
            "is not base64"),
        Arguments.of("no END line", true, OPENSSL_PRIVATE.replace("-----END PRIVATE KEY-----", ""),
            "has no -----END PRIVATE KEY----- line"),
        Arguments.of("an encrypted key", true,
            "-----BEGIN ENCRYPTED PRIVATE KEY-----\nMIIB\n-----END ENCRYPTED PRIVATE KEY-----\n",
            "the key is encrypted"));
  }

  @Nested
  class BadFilesAreRefusedOnOneLineNamingTheFile {
    @Test
    void aMissingFile() {
      Path missing = dir.resolve("nope.key");
      assertRefused(() -> SigningKey.read(missing), "signingKey", missing, "no such file");
      assertRefused(() -> TrustedKey.read(missing), "trustedKey", missing, "no such file");
    }

    /** Issue 35: as ssh does, a private key that its group or others may read is refused, naming the fix. */
    @Test
    void aPrivateKeyOthersMayRead() throws Exception {
      Path key = write("open.key", SigningKey.generate().toPem());
      for (String perms : new String[] {"rw-r--r--", "rw-r-----", "rw----r--", "rw--w----"}) {
        Files.setPosixFilePermissions(key, PosixFilePermissions.fromString(perms));
        assertRefused(() -> SigningKey.read(key), "signingKey", key, "the private key is open to others (" + perms
            + "): make it the owner's alone with chmod 600 " + key);
      }
      Files.setPosixFilePermissions(key, PosixFilePermissions.fromString("r--------"));
      assertThat(SigningKey.read(key).keyId()).matches("[0-9a-f]{16}");
    }

    @Test
    void aDirectory() {
      assertRefused(() -> SigningKey.read(dir), "signingKey", dir, "it is a directory");
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("dev.muster.sign.KeysTest#badPemTexts")
    void aPemTextThatIsNotTheKeyAsked(String what, boolean signing, String text, String problem) throws Exception {
      Path file = write("k.pem", text);
      assertRefused(signing ? () -> SigningKey.read(file) : () -> TrustedKey.read(file),
          signing ? "signingKey" : "trustedKey", file, problem);
    }

    @Test
    void aFileThatIsNotPem() throws Exception {
      Path binary = dir.resolve("k.der");
      Files.write(binary, new byte[] {0x30, (byte) 0x82, 0x01, (byte) 0xff, 0x00});
      assertRefused(() -> SigningKey.read(binary), "signingKey", binary, "not a PEM file");
      assertRefused(() -> TrustedKey.read(binary), "trustedKey", binary, "not a PEM file");
    }

    @Test
    void aKeyOfAnotherAlgorithm() throws Exception {
      KeyPair ec = KeyPairGenerator.getInstance("EC").generateKeyPair();
      Path key = write("ec.key", Pem.encode(Pem.PRIVATE, ec.getPrivate().getEncoded()));
      Path pub = write("ec.pub", Pem.encode(Pem.PUBLIC, ec.getPublic().getEncoded()));
      assertRefused(() -> SigningKey.read(key), "signingKey", key, "not an Ed25519 private key");
      assertRefused(() -> TrustedKey.read(pub), "trustedKey", pub, "not an Ed25519 public key");
      assertThatThrownBy(() -> TrustedKey.of(ec.getPublic())).isInstanceOf(InvalidInputException.class)
          .hasMessageContaining("EC key");
    }

    private Path write(String name, String text) throws Exception {
      return Files.writeString(dir.resolve(name), text, StandardCharsets.US_ASCII);
    }

    private void assertRefused(org.assertj.core.api.ThrowableAssert.ThrowingCallable read, String field, Path file,
        String problem) {
      assertThatThrownBy(read).isInstanceOfSatisfying(InvalidInputException.class, e -> {
        assertThat(e.field()).isEqualTo(field);
        assertThat(e.value()).isEqualTo(file.toString());
        assertThat(e.getMessage()).contains(file.toString()).contains(problem).doesNotContain("\n");
      });
    }
  }
}
