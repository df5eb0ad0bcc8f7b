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
import java.time.Instant;
import java.util.Base64;
import java.util.Collection;
import java.util.Objects;
import java.util.Optional;

/**
 * Signs and verifies instance records: who may write under a service's prefix is etcd's business, but with signed
 * records a consumer serves only what a key it trusts wrote, for that key, on that lease, in order, and not after
 * the signer said it expires.
 *
 * <h2>What is signed (version 2)</h2>
 * The signature is an extra member of the value, {@code "sig2":{"kid":"5b58f33094e0ab5e","seq":N,"notAfter":S,
 * "ed25519":"BASE64"}}: {@code kid} is the signer's {@linkplain TrustedKey#keyId() key id}, {@code seq} a number the
 * signer only ever increases for this key, {@code notAfter} the second (Unix time) after which the record must not be
 * served, {@code ed25519} the standard base64 (with padding) of the 64-byte Ed25519 signature of these UTF-8 bytes:
 * <pre>
 *   muster-record-sig-v2 LF
 *   the etcd key, e.g. /muster/default/orders/v1/host-8080-a1b2c3 LF
 *   the lease id the value is put under, in decimal (0: no lease) LF
 *   seq, in decimal LF
 *   notAfter, in decimal LF
 *   the value without its "sig" and "sig2" members, as canonical JSON (see CanonicalJson)</pre>
 * So the signature covers the key path, the lease, the order, the expiry and every member of the value, the ones
 * this version does not know included: changing a field, moving the value to another key or attaching it to another
 * lease makes it fail; putting an older value back is caught by its lower {@code seq} (a consumer keeps the highest
 * it accepted per key), and a value whose lease someone else keeps alive stops being served at its {@code notAfter}
 * (the registrar signs again well before). The canonical form (members sorted, no spaces) makes the signature
 * independent of how a value is spelled, not of what it says. The parts cannot run into each other: a valid key has
 * no line feed, the numbers are digits, and canonical JSON escapes every control character.
 *
 * <h2>Version 1, for the upgrade</h2>
 * Muster 0.1 wrote {@code "sig":{"kid":...,"ed25519":...}} over {@code muster-record-sig-v1 LF key LF lease LF
 * value}, with no order and no expiry; this version refuses such a record ({@link Reason#OLD_FORMAT}). During an
 * upgrade a signer may write both ({@link #sign(SigningKey, String, long, long, Instant, byte[], boolean)}): the
 * version 1 signature is made last, over the value with its {@code sig2} member, so a 0.1 consumer verifies it and
 * ignores {@code sig2} like any unknown member, and this version's consumers ignore {@code sig}.
 *
 * <p>Readers that do not verify ignore both members, so signed and unsigned providers and consumers mix freely.
 *
 * <p>Stateless and thread-safe.
 */
public final class RecordSignature {
  /** The value's member that holds a version 2 signature. */
  public static final String MEMBER = "sig2";
  /** The value's member that held a version 1 signature (Muster 0.1). */
  public static final String MEMBER_V1 = "sig";

  private static final String DOMAIN = "muster-record-sig-v2";
  private static final String DOMAIN_V1 = "muster-record-sig-v1";
  private static final int SIGNATURE_BYTES = 64;

  private RecordSignature() {}

  /** What a verified signature says: who signed, the record's sequence, and until when it may be served. */
  public record Signed(String keyId, long seq, Instant notAfter) {}

  /**
   * {@code value} (a JSON object, such as {@link dev.muster.registry.InstanceCodec#encode} makes) with a version 2
   * signature by {@code key} for {@code etcdKey}, {@code lease}, {@code seq} and {@code notAfter} (whole seconds:
   * the fraction is dropped); signature members already there are replaced. About 170 bytes longer.
   *
   * @throws IllegalArgumentException if {@code value} is not a JSON object, or {@code seq} is negative
   */
  public static byte[] sign(SigningKey key, String etcdKey, long lease, long seq, Instant notAfter, byte[] value) {
    return sign(key, etcdKey, lease, seq, notAfter, value, false);
  }

  /**
   * As {@link #sign(SigningKey, String, long, long, Instant, byte[])}; with {@code alsoV1}, a version 1 signature
   * too (see the class comment), for consumers still on Muster 0.1. About 300 bytes longer then.
   */
  public static byte[] sign(SigningKey key, String etcdKey, long lease, long seq, Instant notAfter, byte[] value,
      boolean alsoV1) {
    Objects.requireNonNull(key, "key");
    Objects.requireNonNull(notAfter, "notAfter");
    if (seq < 0) {
      throw new IllegalArgumentException("seq " + seq + " is negative");
    }
    ObjectNode root = object(value).orElseThrow(() -> new IllegalArgumentException(
        "the value of " + etcdKey + " is not a JSON object"));
    root.remove(MEMBER);
    root.remove(MEMBER_V1);
    long notAfterSeconds = notAfter.getEpochSecond();
    byte[] signature = key.sign(message(etcdKey, lease, seq, notAfterSeconds, root));
    root.putObject(MEMBER).put("kid", key.keyId()).put("seq", seq).put("notAfter", notAfterSeconds)
        .put("ed25519", Base64.getEncoder().encodeToString(signature));
    if (alsoV1) {
      byte[] v1 = key.sign(messageV1(etcdKey, lease, root));
      root.putObject(MEMBER_V1).put("kid", key.keyId()).put("ed25519", Base64.getEncoder().encodeToString(v1));
    }
    try {
      return Json.MAPPER.writeValueAsBytes(root);
    } catch (JsonProcessingException e) {
      throw new MusterException(ErrorCode.INTERNAL, "cannot write the signed value of " + etcdKey, e);
    }
  }

  /**
   * As {@link #verify(Collection, String, long, byte[])}, and also that the record's {@code notAfter} has not passed
   * at {@code now} ({@link Reason#EXPIRED}).
   */
  public static Signed verify(Collection<TrustedKey> trusted, String etcdKey, long lease, byte[] value,
      Instant now) {
    Objects.requireNonNull(now, "now");
    Signed s = verify(trusted, etcdKey, lease, value);
    if (!now.isBefore(s.notAfter())) {
      throw new UnverifiedRecordException(etcdKey, lease, Reason.EXPIRED, "its signature expired at " + s.notAfter()
          + " (its provider signs again well before: a record past it is one nobody renews, or a replay)");
    }
    return s;
  }

  /**
   * Checks that {@code value}, read from {@code etcdKey} on {@code lease}, carries a version 2 signature by one of
   * {@code trusted} for that key and lease; returns what the signature says. Whether its {@code seq} is new and its
   * {@code notAfter} still ahead are the caller's to judge (an endpoint cache knows the key's history, and when it
   * may enforce expiry).
   *
   * @throws UnverifiedRecordException with the {@link Reason} and a one-line message naming the key, the lease and
   *     (for an unknown key) the ids that are trusted
   */
  public static Signed verify(Collection<TrustedKey> trusted, String etcdKey, long lease, byte[] value) {
    Objects.requireNonNull(trusted, "trusted");
    ObjectNode root = object(value).orElseThrow(() -> new UnverifiedRecordException(etcdKey, lease,
        Reason.MALFORMED_SIGNATURE, "the value is not a JSON object"));
    JsonNode sig = root.remove(MEMBER);
    JsonNode v1 = root.remove(MEMBER_V1);
    if (sig == null || sig.isNull()) {
      if (v1 != null && !v1.isNull()) {
        throw new UnverifiedRecordException(etcdKey, lease, Reason.OLD_FORMAT, "it has only a version 1 signature"
            + " (\"" + MEMBER_V1 + "\": no sequence, no expiry, written by Muster 0.1): upgrade its provider");
      }
      throw new UnverifiedRecordException(etcdKey, lease, Reason.UNSIGNED, "it has no signature (no \"" + MEMBER
          + "\" member)");
    }
    JsonNode kid = sig.get("kid");
    JsonNode seq = sig.get("seq");
    JsonNode notAfter = sig.get("notAfter");
    JsonNode ed25519 = sig.get("ed25519");
    byte[] signature = sig.isObject() && sig.size() == 4 && kid != null && kid.isTextual() && isCount(seq)
        && isCount(notAfter) && ed25519 != null && ed25519.isTextual() ? base64(ed25519.textValue()) : null;
    if (signature == null || signature.length != SIGNATURE_BYTES) {
      throw new UnverifiedRecordException(etcdKey, lease, Reason.MALFORMED_SIGNATURE, "its \"" + MEMBER
          + "\" member " + Json.show(sig) + " is not {\"kid\": KEY ID, \"seq\": N, \"notAfter\": UNIX SECONDS,"
          + " \"ed25519\": base64 of 64 bytes}");
    }
    TrustedKey signer = trusted.stream().filter(k -> k.keyId().equals(kid.textValue())).findFirst()
        .orElseThrow(() -> new UnverifiedRecordException(etcdKey, lease, Reason.UNKNOWN_KEY, "signed by key "
            + Json.show(kid) + ", which is not trusted for it (trusted: "
            + String.join(", ", trusted.stream().map(TrustedKey::keyId).toList()) + ")"));
    if (!signer.verifies(message(etcdKey, lease, seq.longValue(), notAfter.longValue(), root), signature)) {
      throw new UnverifiedRecordException(etcdKey, lease, Reason.BAD_SIGNATURE, "the signature by key "
          + signer.keyId() + " does not match this key, lease and value (changed, moved or forged)");
    }
    return new Signed(signer.keyId(), seq.longValue(), Instant.ofEpochSecond(notAfter.longValue()));
  }

  /**
   * Whether {@code value} is a JSON object with a signature member (either version): a signed record, which only its
   * provider's key can change (an operator's drain must not strip the signature).
   */
  public static boolean isSigned(byte[] value) {
    return object(value).map(o -> o.has(MEMBER) || o.has(MEMBER_V1)).orElse(false);
  }

  /** The signed bytes (see the class comment); {@code unsigned} has no signature member. */
  static byte[] message(String etcdKey, long lease, long seq, long notAfter, ObjectNode unsigned) {
    StringBuilder out = new StringBuilder(512).append(DOMAIN).append('\n')
        .append(Objects.requireNonNull(etcdKey, "etcdKey")).append('\n').append(lease).append('\n').append(seq)
        .append('\n').append(notAfter).append('\n');
    CanonicalJson.write(unsigned, out);
    return out.toString().getBytes(StandardCharsets.UTF_8);
  }

  /** Version 1's signed bytes, over {@code value} as it stands (with its {@code sig2} member, without {@code sig}). */
  private static byte[] messageV1(String etcdKey, long lease, ObjectNode value) {
    StringBuilder out = new StringBuilder(512).append(DOMAIN_V1).append('\n')
        .append(Objects.requireNonNull(etcdKey, "etcdKey")).append('\n').append(lease).append('\n');
    CanonicalJson.write(value, out);
    return out.toString().getBytes(StandardCharsets.UTF_8);
  }

  private static boolean isCount(JsonNode n) {
    return n != null && n.isIntegralNumber() && n.canConvertToLong() && n.longValue() >= 0;
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
