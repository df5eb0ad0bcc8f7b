package dev.muster.cache.internal;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.muster.MusterException;
import dev.muster.cache.EndpointSet;
import dev.muster.registry.Instance;
import dev.muster.registry.InstanceCodec;
import dev.muster.registry.InstanceKey;
import java.io.IOException;
import java.nio.channels.FileChannel;
import java.nio.file.AtomicMoveNotSupportedException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.StandardOpenOption;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A {@link SnapshotStore} in one JSON file: {@code {"format":1,"revision":R,"instances":[{"key":{...},"value":{...}}]}},
 * where each value is the instance's registry JSON. Written to a temporary file in the same directory, fsynced,
 * then renamed over the old one, so a crash leaves the old file or the new one.
 *
 * <p>Not thread-safe; the cache calls it from its loop thread only.
 */
public final class FileSnapshotStore implements SnapshotStore {
  private static final Logger log = LoggerFactory.getLogger(FileSnapshotStore.class);
  private static final ObjectMapper JSON = new ObjectMapper();

  private final Path file;

  public FileSnapshotStore(Path file) {
    this.file = file.toAbsolutePath();
  }

  public Path file() {
    return file;
  }

  @Override
  public Optional<EndpointSet> load() {
    if (!Files.exists(file)) {
      return Optional.empty();
    }
    try {
      JsonNode root = JSON.readTree(file.toFile());
      // An empty or foreign file must not load as "a set with no instances": the driver would serve it.
      JsonNode rev = root == null ? null : root.path("revision");
      if (rev == null || root.path("format").asInt() != 1 || !rev.isIntegralNumber() || !rev.canConvertToLong()
          || rev.longValue() < 1 || !root.path("instances").isArray()) {
        log.warn("ignoring the endpoint snapshot {}: not a format 1 snapshot with a revision and instances", file);
        return Optional.empty();
      }
      long revision = rev.longValue();
      List<Instance> instances = new ArrayList<>();
      for (JsonNode entry : root.path("instances")) {
        JsonNode k = entry.path("key");
        InstanceKey key = new InstanceKey(k.path("namespace").asText(), k.path("service").asText(),
            k.path("version").asText(), k.path("id").asText());
        instances.add(InstanceCodec.decode(key, JSON.writeValueAsBytes(entry.path("value"))));
      }
      return Optional.of(EndpointSet.of(revision, instances));
    } catch (IOException | MusterException e) {
      log.warn("ignoring the endpoint snapshot {}: {}", file, e.getMessage());
      return Optional.empty();
    }
  }

  @Override
  public void save(EndpointSet set) {
    ObjectNode root = JSON.createObjectNode();
    root.put("format", 1);
    root.put("revision", set.revision());
    ArrayNode list = root.putArray("instances");
    try {
      for (Instance i : set.instances()) {
        ObjectNode entry = list.addObject();
        ObjectNode k = entry.putObject("key");
        k.put("namespace", i.namespace());
        k.put("service", i.service());
        k.put("version", i.version());
        k.put("id", i.id());
        entry.set("value", JSON.readTree(InstanceCodec.encode(i)));
      }
      Path dir = file.getParent();
      Files.createDirectories(dir);
      Path tmp = Files.createTempFile(dir, file.getFileName().toString(), ".tmp");
      try {
        try (FileChannel ch = FileChannel.open(tmp, StandardOpenOption.WRITE, StandardOpenOption.TRUNCATE_EXISTING)) {
          ch.write(java.nio.ByteBuffer.wrap(JSON.writeValueAsBytes(root)));
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
