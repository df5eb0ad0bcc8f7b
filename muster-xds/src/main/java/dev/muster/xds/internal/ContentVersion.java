package dev.muster.xds.internal;

import com.google.protobuf.Any;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.HexFormat;

/**
 * A resource's version from its bytes: the first 64 bits of their SHA-256. Equal content, equal version, so a
 * change that changes nothing a client sees (a record signed again, a resync that finds the same set) pushes
 * nothing; unequal content collides with probability 2^-64. Protobuf's Java serialization of a message without
 * map fields is deterministic, which these messages are.
 */
final class ContentVersion {
  private ContentVersion() {}

  static String of(Any body) {
    try {
      MessageDigest sha = MessageDigest.getInstance("SHA-256");
      sha.update(body.getTypeUrlBytes().asReadOnlyByteBuffer());
      sha.update(body.getValue().asReadOnlyByteBuffer());
      return HexFormat.of().formatHex(sha.digest(), 0, 8);
    } catch (NoSuchAlgorithmException e) {
      throw new IllegalStateException("every JDK has SHA-256", e);
    }
  }
}
