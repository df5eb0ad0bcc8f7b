package dev.muster.sign;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.muster.ErrorCode;
import dev.muster.MusterException;
import dev.muster.internal.Json;
import dev.muster.sign.UnverifiedRecordException.Reason;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.security.GeneralSecurityException;
import java.security.Signature;
import java.util.Base64;
import java.util.Collection;
import java.util.Objects;
import java.util.Optional;

/**
 * Signs and verifies instance records: who may write under a service's prefix is etcd's business, but with signed
 * records a consumer serves only what a key it trusts wrote, for that key, on that lease.
 *
 * <h2>What is signed</h2>
 * The signature is an extra member of the value, {@code "sig":{"kid":"5b58f33094e0ab5e","ed25519":"BASE64"}}:
 * {@code kid} is the signer's {@linkplain TrustedKey#keyId() key id}, {@code ed25519} the standard base64 (with
 * padding) of the 64-byte Ed25519 signature of these UTF-8 bytes:
 * <pre>
 *   muster-record-sig-v1 LF
 *   the etcd key, e.g. /muster/default/orders/v1/host-8080-a1b2c3 LF
 *   the lease id the value is put under, in decimal (0: no lease) LF
 *   the value without its "sig" member, as canonical JSON (see CanonicalJson)</pre>
 * So the signature covers the key path, the lease and every member of the value, the ones this version does not
 * know included: changing a field, moving the value to another key or attaching it to another lease (a copy on
 * the attacker's own lease, or a value left behind after its lease was lost) makes it fail. The canonical form
 * (members sorted, no spaces) makes the signature independent of how a value is spelled, not of what it says. The
 * parts cannot run into each other: a valid key has no line feed, the lease is digits, and canonical JSON escapes
 * every control character.
 *
 * <p>Readers that do not verify ignore {@code sig} like any unknown member, so signed and unsigned providers and
 * consumers mix freely. Since a provider re-puts its value under a new lease after a lease loss, it signs whenever
 * it puts (Muster's registrar does, when given a {@link SigningKey}).
 *
 * <p>Cost: one Ed25519 signature per put; one verification per record a cache receives (1-3 ms each on JDK 17,
 * whose Ed25519 is plain Java, on a 2-core machine: a snapshot of n records takes n-3n ms more).
 *
 * <p>Stateless and thread-safe.
 */
public final class RecordSignature {
  /** The value's member that holds the signature. */
  public static final String MEMBER = "sig";

  private static final String DOMAIN = "muster-record-sig-v1";
  private static final int SIGNATURE_BYTES = 64;

  private RecordSignature() {}

  /**
   * {@code value} (a JSON object, such as {@link dev.muster.registry.InstanceCodec#encode} makes) with a signature
   * by {@code key} for {@code etcdKey} and {@code lease}; a {@code sig} member already there is replaced. The
   * result is about 130 bytes longer.
   *
   * @throws IllegalArgumentException if {@code value} is not a JSON object
   */
  public static byte[] sign(SigningKey key, String etcdKey, long lease, byte[] value) {
    Objects.requireNonNull(key, "key");
    ObjectNode root = object(value).orElseThrow(() -> new IllegalArgumentException(
        "the value of " + etcdKey + " is not a JSON object"));
    root.remove(MEMBER);
    byte[] signature = key.sign(message(etcdKey, lease, root));
    root.putObject(MEMBER).put("kid", key.keyId()).put("ed25519", Base64.getEncoder().encodeToString(signature));
    try {
      return Json.MAPPER.writeValueAsBytes(root);
    } catch (JsonProcessingException e) {
      throw new MusterException(ErrorCode.INTERNAL, "cannot write the signed value of " + etcdKey, e);
    }
  }

  /**
   * Checks that {@code value}, read from {@code etcdKey} on {@code lease}, is signed for that key and lease by
   * one of {@code trusted}; returns normally if it is.
   *
   * @throws UnverifiedRecordException with the {@link Reason} and a one-line message naming the key, the lease and
   *     (for an unknown key) the ids that are trusted
   */
  public static void verify(Collection<TrustedKey> trusted, String etcdKey, long lease, byte[] value) {
    Objects.requireNonNull(trusted, "trusted");
    ObjectNode root = object(value).orElseThrow(() -> new UnverifiedRecordException(etcdKey, lease,
        Reason.MALFORMED_SIGNATURE, "the value is not a JSON object"));
    JsonNode sig = root.remove(MEMBER);
    if (sig == null || sig.isNull()) {
      throw new UnverifiedRecordException(etcdKey, lease, Reason.UNSIGNED, "it has no signature (no \"" + MEMBER
          + "\" member)");
    }
    JsonNode kid = sig.get("kid");
    JsonNode ed25519 = sig.get("ed25519");
    byte[] signature = sig.isObject() && sig.size() == 2 && kid != null && kid.isTextual() && ed25519 != null
        && ed25519.isTextual() ? base64(ed25519.textValue()) : null;
    if (signature == null || signature.length != SIGNATURE_BYTES) {
      throw new UnverifiedRecordException(etcdKey, lease, Reason.MALFORMED_SIGNATURE, "its \"" + MEMBER
          + "\" member " + Json.show(sig) + " is not {\"kid\": KEY ID, \"ed25519\": base64 of 64 bytes}");
    }
    TrustedKey signer = trusted.stream().filter(k -> k.keyId().equals(kid.textValue())).findFirst()
        .orElseThrow(() -> new UnverifiedRecordException(etcdKey, lease, Reason.UNKNOWN_KEY, "signed by key "
            + Json.show(kid) + ", which is not trusted for it (trusted: "
            + String.join(", ", trusted.stream().map(TrustedKey::keyId).toList()) + ")"));
    if (!verifies(signer, message(etcdKey, lease, root), signature)) {
      throw new UnverifiedRecordException(etcdKey, lease, Reason.BAD_SIGNATURE, "the signature by key "
          + signer.keyId() + " does not match this key, lease and value (changed, moved or forged)");
    }
  }

  /**
   * Whether {@code value} is a JSON object with a {@code sig} member: a signed record, which only its provider's
   * key can change (an operator's drain must not strip the signature).
   */
  public static boolean isSigned(byte[] value) {
    return object(value).map(o -> o.has(MEMBER)).orElse(false);
  }

  /** The signed bytes (see the class comment); {@code unsigned} has no {@code sig} member. */
  static byte[] message(String etcdKey, long lease, ObjectNode unsigned) {
    StringBuilder out = new StringBuilder(512).append(DOMAIN).append('\n')
        .append(Objects.requireNonNull(etcdKey, "etcdKey")).append('\n').append(lease).append('\n');
    CanonicalJson.write(unsigned, out);
    return out.toString().getBytes(StandardCharsets.UTF_8);
  }

  private static boolean verifies(TrustedKey key, byte[] message, byte[] signature) {
    try {
      Signature s = Signature.getInstance("Ed25519");
      s.initVerify(key.publicKey());
      s.update(message);
      return s.verify(signature);
    } catch (GeneralSecurityException e) {
      return false; // a signature the provider cannot even parse does not verify
    }
  }

  private static Optional<ObjectNode> object(byte[] value) {
    try {
      JsonNode root = value == null ? null : Json.MAPPER.readTree(value);
      return root instanceof ObjectNode o ? Optional.of(o) : Optional.empty();
    } catch (IOException e) {
      return Optional.empty();
    }
  }

  private static byte[] base64(String text) {
    try {
      return Base64.getDecoder().decode(text);
    } catch (IllegalArgumentException e) {
      return null;
    }
  }
}
