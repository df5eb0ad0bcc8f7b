package dev.muster.sign;

import dev.muster.InvalidInputException;
import java.nio.file.Path;
import java.security.GeneralSecurityException;
import java.security.KeyFactory;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.security.PublicKey;
import java.security.interfaces.EdECPublicKey;
import java.security.spec.X509EncodedKeySpec;
import java.util.Arrays;
import java.util.HexFormat;
import java.util.Objects;
import org.bouncycastle.math.ec.rfc8032.Ed25519;

/**
 * A public Ed25519 key that a consumer trusts to sign instance records, with its key id. An immutable value, safe
 * to share between threads.
 *
 * <p>The key id is derived from the key, never given: the first 8 bytes of the SHA-256 of the key's X.509
 * SubjectPublicKeyInfo (DER), in lowercase hex, so the {@code .pub} file alone identifies the key. With OpenSSL:
 * {@code openssl pkey -pubin -in NAME.pub -outform DER | sha256sum | cut -c1-16}. A signed record names the id of
 * the key that signed it; a consumer that trusts two keys at once (the old and the new one, while providers are
 * rotated) picks the key by that id.
 *
 * <p>Files are PEM ({@code -----BEGIN PUBLIC KEY-----}) as written by {@code openssl pkey -pubout} and by
 * {@code muster keygen}.
 */
public final class TrustedKey {
  private static final String FIELD = "trustedKey";
  private static final String WANTED = "give an Ed25519 public key (PEM \"BEGIN PUBLIC KEY\", e.g. NAME.pub from"
      + " muster keygen, or openssl pkey -in NAME.key -pubout)";

  private static final int RAW_BYTES = 32; // an Ed25519 public key; its SubjectPublicKeyInfo ends with them

  private final PublicKey key;
  private final byte[] encoded;
  private final String keyId;
  private final Ed25519.PublicPoint point; // decoded once: each verification would decode it again

  private TrustedKey(PublicKey key) {
    this.key = key;
    this.encoded = key.getEncoded();
    this.keyId = keyIdOf(encoded);
    this.point = encoded.length < RAW_BYTES ? null
        : Ed25519.validatePublicKeyFullExport(encoded, encoded.length - RAW_BYTES);
    if (point == null) {
      throw new InvalidInputException(FIELD, "key " + keyId, "not a point of full order on Ed25519's curve, so"
          + " nothing it signs can be trusted: " + WANTED);
    }
  }

  /**
   * The trusted key for {@code key}.
   *
   * @throws InvalidInputException (field {@code trustedKey}) unless it is an Ed25519 public key
   */
  public static TrustedKey of(PublicKey key) {
    if (!(key instanceof EdECPublicKey ed) || !"Ed25519".equalsIgnoreCase(ed.getParams().getName())) {
      throw new InvalidInputException(FIELD, key == null ? null : key.getAlgorithm() + " key", WANTED);
    }
    return new TrustedKey(key);
  }

  /**
   * Reads a PEM public key file.
   *
   * @throws InvalidInputException (field {@code trustedKey}) naming the file: missing, unreadable, not PEM, a
   *     private key, or not Ed25519
   */
  public static TrustedKey read(Path file) {
    return parse(file == null ? null : file.toString(), Pem.read(FIELD, file));
  }

  /** As {@link #read(Path)}, from PEM text (say, from a secret store). */
  public static TrustedKey parse(String pem) {
    return parse("(PEM text)", Objects.requireNonNull(pem, "pem"));
  }

  private static TrustedKey parse(String source, String text) {
    if (text.contains("-----BEGIN " + Pem.PRIVATE) && !text.contains("-----BEGIN " + Pem.PUBLIC)) {
      throw new InvalidInputException(FIELD, source, "it holds a private key, which must stay with the provider: "
          + WANTED);
    }
    byte[] der = Pem.decode(FIELD, source, text, Pem.PUBLIC, WANTED);
    try {
      return new TrustedKey(KeyFactory.getInstance("Ed25519").generatePublic(new X509EncodedKeySpec(der)));
    } catch (GeneralSecurityException e) {
      throw new InvalidInputException(FIELD, source, "not an Ed25519 public key: " + WANTED);
    }
  }

  /** The key id a record signed by this key names: 16 lowercase hex digits (see the class comment). */
  public String keyId() {
    return keyId;
  }

  /** The Ed25519 public key. */
  public PublicKey publicKey() {
    return key;
  }

  /**
   * Whether {@code signature} is this key's Ed25519 signature of {@code message} (RFC 8032; BouncyCastle's
   * implementation, about 8 times JDK 17's: {@code SignatureBenchmark}). Safe from any thread.
   */
  boolean verifies(byte[] message, byte[] signature) {
    return signature.length == Ed25519.SIGNATURE_SIZE
        && Ed25519.verify(signature, 0, point, message, 0, message.length);
  }

  /** The key as a PEM {@code PUBLIC KEY} block (X.509 SubjectPublicKeyInfo), what {@code muster keygen} writes. */
  public String toPem() {
    return Pem.encode(Pem.PUBLIC, encoded);
  }

  static String keyIdOf(byte[] subjectPublicKeyInfo) {
    try {
      byte[] digest = MessageDigest.getInstance("SHA-256").digest(subjectPublicKeyInfo);
      return HexFormat.of().formatHex(digest, 0, 8);
    } catch (NoSuchAlgorithmException e) {
      throw new IllegalStateException("every JDK has SHA-256", e);
    }
  }

  /** Equal when the keys are (the same encoded key). */
  @Override
  public boolean equals(Object o) {
    return o instanceof TrustedKey other && Arrays.equals(encoded, other.encoded);
  }

  @Override
  public int hashCode() {
    return Arrays.hashCode(encoded);
  }

  @Override
  public String toString() {
    return "TrustedKey[" + keyId + "]";
  }
}
