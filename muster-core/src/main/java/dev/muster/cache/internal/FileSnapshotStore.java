package dev.muster.cache.internal;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.AtomicMoveNotSupportedException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.StandardOpenOption;
import java.util.ArrayList;
import java.util.Base64;
import java.util.List;
import java.util.Optional;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A {@link SnapshotStore} in one JSON file, format 2: {@code {"format":2,"revision":R,"records":[{"key":"/muster/...",
 * "lease":L,"modRevision":M,"value":"BASE64"}]}}, each record as etcd held it (the value's bytes, its signature
 * included, in base64 so that they come back byte for byte). Written to a temporary file in the same directory,
 * fsynced, then renamed over the old one, so a crash leaves the old file or the new one. A format 1 file (Muster
 * 0.1: decoded instances, no signatures, so nothing a cache could check again) is ignored with one line.
 *
 * <p>The store only reads and writes; what a loaded record is worth (under the cache's prefix? does it decode,
 * verify?) is the cache's to judge ({@link RevisionApplier#checkSaved}). Not thread-safe; the cache calls it from its
 * loop thread only.
 */
public final class FileSnapshotStore implements SnapshotStore {
  private static final Logger log = LoggerFactory.getLogger(FileSnapshotStore.class);
  private static final ObjectMapper JSON = new ObjectMapper();
  private static final int FORMAT = 2;

  private final Path file;

  public FileSnapshotStore(Path file) {
    this.file = file.toAbsolutePath();
  }

  public Path file() {
    return file;
  }

  @Override
  public Optional<Stored> load() {
    if (!Files.exists(file)) {
      return Optional.empty();
    }
    try {
      JsonNode root = JSON.readTree(file.toFile());
      // An empty or foreign file must not load as "a set with no instances": the driver would serve it.
      if (root != null && root.path("format").asInt() == 1) {
        log.warn("ignoring the endpoint snapshot {}: format 1, written by Muster 0.1 (no signatures to check again);"
            + " the next save writes format 2", file);
        return Optional.empty();
      }
      JsonNode rev = root == null ? null : root.path("revision");
      if (rev == null || root.path("format").asInt() != FORMAT || !rev.isIntegralNumber() || !rev.canConvertToLong()
          || rev.longValue() < 1 || !root.path("records").isArray()) {
        log.warn("ignoring the endpoint snapshot {}: not a format 2 snapshot with a revision and records", file);
        return Optional.empty();
      }
      List<CacheRecord> records = new ArrayList<>();
      for (JsonNode r : root.path("records")) {
        JsonNode key = r.path("key");
        JsonNode lease = r.path("lease");
        JsonNode mod = r.path("modRevision");
        JsonNode value = r.path("value");
        if (!key.isTextual() || !lease.canConvertToLong() || !lease.isIntegralNumber() || !mod.isIntegralNumber()
            || !mod.canConvertToLong() || !value.isTextual()) {
          log.warn("ignoring the endpoint snapshot {}: a record is not {{key, lease, modRevision, value}}", file);
          return Optional.empty();
        }
        records.add(CacheRecord.put(key.textValue(), Base64.getDecoder().decode(value.textValue()), mod.longValue(),
            lease.longValue()));
      }
      return Optional.of(new Stored(rev.longValue(), records));
    } catch (IOException | IllegalArgumentException e) {
      log.warn("ignoring the endpoint snapshot {}: {}", file, e.getMessage());
      return Optional.empty();
    }
  }

  @Override
  public void save(Stored set) {
    ObjectNode root = JSON.createObjectNode();
    root.put("format", FORMAT);
    root.put("revision", set.revision());
    ArrayNode list = root.putArray("records");
    for (CacheRecord r : set.records()) {
      list.addObject().put("key", r.key()).put("lease", r.lease()).put("modRevision", r.modRevision())
          .put("value", Base64.getEncoder().encodeToString(r.value()));
    }
    try {
      Path dir = file.getParent();
      Files.createDirectories(dir);
      Path tmp = Files.createTempFile(dir, file.getFileName().toString(), ".tmp");
      try {
        try (FileChannel ch = FileChannel.open(tmp, StandardOpenOption.WRITE, StandardOpenOption.TRUNCATE_EXISTING)) {
          ch.write(ByteBuffer.wrap(JSON.writeValueAsBytes(root)));
          ch.force(true);
        }
        try {
          Files.move(tmp, file, StandardCopyOption.ATOMIC_MOVE, StandardCopyOption.REPLACE_EXISTING);
        } catch (AtomicMoveNotSupportedException e) {
          Files.move(tmp, file, StandardCopyOption.REPLACE_EXISTING);
        }
      } finally {
        Files.deleteIfExists(tmp);
      }
    } catch (IOException e) {
      log.warn("could not write the endpoint snapshot {}: {}", file, e.getMessage());
    }
  }
}
