package dev.muster.sign;

import dev.muster.InvalidInputException;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermission;
import java.nio.file.attribute.PosixFilePermissions;
import java.security.GeneralSecurityException;
import java.security.KeyFactory;
import java.security.KeyPair;
import java.security.KeyPairGenerator;
import java.security.PrivateKey;
import java.security.PublicKey;
import java.security.SecureRandom;
import java.security.Signature;
import java.security.interfaces.EdECPrivateKey;
import java.security.spec.NamedParameterSpec;
import java.security.spec.PKCS8EncodedKeySpec;
import java.util.Arrays;
import java.util.EnumSet;
import java.util.Objects;
import java.util.Set;

/**
 * A provider's private Ed25519 key, with the key id of its public half ({@link TrustedKey#keyId()}), for signing
 * its instance records ({@link RecordSignature}). Immutable and thread-safe; {@link #toString()} shows only the id.
 *
 * <p>Files are PKCS#8 PEM ({@code -----BEGIN PRIVATE KEY-----}), unencrypted, as written by
 * {@code openssl genpkey -algorithm ed25519} and by {@code muster keygen}. Such a file holds only the private key;
 * the public key (and so the key id) is computed from it when the key is read.
 */
public final class SigningKey {
  private static final String FIELD = "signingKey";
  private static final String WANTED = "give an unencrypted Ed25519 private key (PEM \"BEGIN PRIVATE KEY\", e.g."
      + " NAME.key from muster keygen, or openssl genpkey -algorithm ed25519)";

  private final PrivateKey key;
  private final TrustedKey publicHalf;

  private SigningKey(PrivateKey key, TrustedKey publicHalf) {
    this.key = key;
    this.publicHalf = publicHalf;
  }

  /** A new random key (from the JDK's default {@link SecureRandom}). */
  public static SigningKey generate() {
    try {
      KeyPair pair = KeyPairGenerator.getInstance("Ed25519").generateKeyPair();
      return new SigningKey(pair.getPrivate(), TrustedKey.of(pair.getPublic()));
    } catch (GeneralSecurityException e) {
      throw new IllegalStateException("this JDK has no Ed25519 (every JDK 15 or later has)", e);
    }
  }

  /**
   * Reads a PKCS#8 PEM private key file, which only its owner may read (as ssh refuses a private key others can
   * read): on a file system with POSIX permissions, a file that its group or others may read or write is refused.
   *
   * @throws InvalidInputException (field {@code signingKey}) naming the file: missing, unreadable, readable by
   *     others, not PEM, a public key, encrypted, or not Ed25519
   */
  public static SigningKey read(Path file) {
    SigningKey key = parse(file == null ? null : file.toString(), Pem.read(FIELD, file));
    requireOwnerOnly(file); // after the content's checks: a public key given here is told so first
    return key;
  }

  private static void requireOwnerOnly(Path file) {
    Set<PosixFilePermission> perms;
    try {
      perms = Files.getPosixFilePermissions(file);
    } catch (UnsupportedOperationException | IOException e) {
      return; // no POSIX permissions here, or no such file: Pem.read says which
    }
    Set<PosixFilePermission> others = EnumSet.copyOf(perms);
    others.removeAll(EnumSet.of(PosixFilePermission.OWNER_READ,
        PosixFilePermission.OWNER_WRITE,
        PosixFilePermission.OWNER_EXECUTE));
    if (!others.isEmpty()) {
      throw new InvalidInputException(FIELD, file.toString(), "the private key is open to others ("
          + PosixFilePermissions.toString(perms) + "): make it the owner's alone with"
          + " chmod 600 " + file);
    }
  }

  /** As {@link #read(Path)}, from PEM text (say, from a secret store). */
  public static SigningKey parse(String pem) {
    return parse("(PEM text)", Objects.requireNonNull(pem, "pem"));
  }

  private static SigningKey parse(String source, String text) {
    if (text.contains("-----BEGIN ENCRYPTED PRIVATE KEY-----")) {
      throw new InvalidInputException(FIELD, source, "the key is encrypted; decrypt it first (openssl pkey -in FILE"
          + " -out PLAIN.key): " + WANTED);
    }
    if (text.contains("-----BEGIN " + Pem.PUBLIC) && !text.contains("-----BEGIN " + Pem.PRIVATE)) {
      throw new InvalidInputException(FIELD, source, "it holds a public key, which can only verify: " + WANTED);
    }
    byte[] der = Pem.decode(FIELD, source, text, Pem.PRIVATE, WANTED);
    PrivateKey key;
    try {
      key = KeyFactory.getInstance("Ed25519").generatePrivate(new PKCS8EncodedKeySpec(der));
    } catch (GeneralSecurityException e) {
      throw new InvalidInputException(FIELD, source, "not an Ed25519 private key: " + WANTED);
    }
    return new SigningKey(key, TrustedKey.of(publicKeyOf((EdECPrivateKey) key)));
  }

  /** The id of this key's public half, which every record it signs names. */
  public String keyId() {
    return publicHalf.keyId();
  }

  /** The public half, for consumers to trust (and for {@code muster keygen} to write as {@code NAME.pub}). */
  public TrustedKey trustedKey() {
    return publicHalf;
  }

  /** The private key as a PEM {@code PRIVATE KEY} block (PKCS#8, unencrypted): keep it secret. */
  public String toPem() {
    return Pem.encode(Pem.PRIVATE, key.getEncoded());
  }

  /** An Ed25519 signature of {@code message} by this key (64 bytes). */
  byte[] sign(byte[] message) {
    try {
      Signature s = Signature.getInstance("Ed25519");
      s.initSign(key);
      s.update(message);
      return s.sign();
    } catch (GeneralSecurityException e) {
      throw new IllegalStateException("cannot sign with Ed25519 key " + keyId(), e);
    }
  }

  /**
   * The public key of an Ed25519 private key. The JDK has no call for it, but its key pair generator turns 32
   * random bytes into the private key and computes the public one from them: handed the private key's bytes as its
   * "random" bytes, it computes our public key. The result is checked (same private bytes, and a signature that
   * verifies), so a JDK that generated keys differently would fail here loudly rather than sign under a wrong id.
   */
  private static PublicKey publicKeyOf(EdECPrivateKey key) {
    byte[] seed = key.getBytes().orElseThrow(() -> new IllegalStateException("the Ed25519 key has no bytes"));
    try {
      KeyPairGenerator generator = KeyPairGenerator.getInstance("Ed25519");
      generator.initialize(NamedParameterSpec.ED25519, new Replay(seed));
      KeyPair pair = generator.generateKeyPair();
      byte[] regenerated = ((EdECPrivateKey) pair.getPrivate()).getBytes().orElse(new byte[0]);
      Signature check = Signature.getInstance("Ed25519");
      check.initSign(key);
      check.update(seed);
      byte[] signature = check.sign();
      check.initVerify(pair.getPublic());
      check.update(seed);
      if (!Arrays.equals(regenerated, seed) || !check.verify(signature)) {
        throw new IllegalStateException("could not compute the public half of an Ed25519 key on this JDK");
      }
      return pair.getPublic();
    } catch (GeneralSecurityException e) {
      throw new IllegalStateException("could not compute the public half of an Ed25519 key: " + e, e);
    }
  }

  /** Equal when the private keys are. */
  @Override
  public boolean equals(Object o) {
    return o instanceof SigningKey other && Arrays.equals(key.getEncoded(), other.key.getEncoded());
  }

  @Override
  public int hashCode() {
    return publicHalf.hashCode();
  }

  @Override
  public String toString() {
    return "SigningKey[" + keyId() + "]";
  }

  /** "Random" bytes that are the given ones: see {@link #publicKeyOf}. */
  private static final class Replay extends SecureRandom {
    private static final long serialVersionUID = 1L;
    private final byte[] bytes;

    Replay(byte[] bytes) {
      this.bytes = bytes.clone();
    }

    @Override
    public void nextBytes(byte[] out) {
      if (out.length != bytes.length) {
        throw new IllegalStateException("expected a request for " + bytes.length + " bytes, got " + out.length);
      }
      System.arraycopy(bytes, 0, out, 0, out.length);
    }
  }
}
