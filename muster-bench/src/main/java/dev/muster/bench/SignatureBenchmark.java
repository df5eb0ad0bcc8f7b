package dev.muster.bench;

import dev.muster.registry.InstanceCodec;
import dev.muster.registry.RegistryLayout;
import dev.muster.sign.RecordSignature;
import dev.muster.sign.SigningKey;
import dev.muster.sign.TrustedKey;
import java.nio.charset.StandardCharsets;
import java.security.Signature;
import java.time.Instant;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.bouncycastle.crypto.params.Ed25519PublicKeyParameters;
import org.bouncycastle.crypto.signers.Ed25519Signer;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;

/**
 * The cost of one signed record (issue 35): {@link #verifyRecord} is what a cache does per record it has not
 * verified before ({@link RecordSignature#verify}: parse, canonical form, one Ed25519 verification); {@link
 * #ed25519Jdk} and {@link #ed25519BouncyCastle} are the bare verification of the same message and signature by JDK
 * 17's provider (plain Java) and by BouncyCastle's {@code Ed25519Signer}, to choose between them; {@link #signRecord}
 * is what a provider does per put. In ns/op.
 */
@State(Scope.Benchmark)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.NANOSECONDS)
public class SignatureBenchmark {
  private static final long LEASE = 0x694d_8a1b_2c3d_4e5fL;

  private SigningKey key;
  private List<TrustedKey> trusted;
  private String etcdKey;
  private byte[] value;
  private byte[] signed;
  private byte[] message;
  private byte[] signature;
  private java.security.PublicKey jdkKey;
  private Ed25519PublicKeyParameters bcKey;

  @Setup
  public void setUp() throws Exception {
    key = SigningKey.generate();
    trusted = List.of(key.trustedKey());
    etcdKey = RegistryLayout.defaults().instanceKey(SpecExample.instance());
    value = InstanceCodec.encode(SpecExample.instance());
    signed = RecordSignature.sign(key, etcdKey, LEASE, 1, Instant.now().plusSeconds(3600), value);
    message = new String(signed, StandardCharsets.UTF_8).getBytes(StandardCharsets.UTF_8); // a record's size
    java.security.KeyPair pair = java.security.KeyPairGenerator.getInstance("Ed25519").generateKeyPair();
    Signature signer = Signature.getInstance("Ed25519");
    signer.initSign(pair.getPrivate());
    signer.update(message);
    signature = signer.sign();
    jdkKey = pair.getPublic();
    byte[] x509 = jdkKey.getEncoded(); // SubjectPublicKeyInfo: the raw key is its last 32 bytes
    bcKey = new Ed25519PublicKeyParameters(Arrays.copyOfRange(x509, x509.length - 32, x509.length), 0);
    if (!ed25519Jdk() || !ed25519BouncyCastle()) {
      throw new IllegalStateException("the fixture's signature does not verify");
    }
  }

  @Benchmark
  public RecordSignature.Signed verifyRecord() {
    return RecordSignature.verify(trusted, etcdKey, LEASE, signed);
  }

  @Benchmark
  public boolean ed25519Jdk() throws Exception {
    Signature s = Signature.getInstance("Ed25519");
    s.initVerify(jdkKey);
    s.update(message);
    return s.verify(signature);
  }

  @Benchmark
  public boolean ed25519BouncyCastle() {
    Ed25519Signer s = new Ed25519Signer();
    s.init(false, bcKey);
    s.update(message, 0, message.length);
    return s.verifySignature(signature);
  }

  @Benchmark
  public byte[] signRecord() {
    return RecordSignature.sign(key, etcdKey, LEASE, 2, Instant.now().plusSeconds(3600), value);
  }
}
