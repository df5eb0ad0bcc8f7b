package dev.muster.cli;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.json.JsonMapper;
import dev.muster.testing.ChildProcess;
import dev.muster.testing.EtcdBinary;
import dev.muster.testing.EtcdLaunchException;
import dev.muster.testing.Executables;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;

/**
 * etcd's own snapshot tool, {@code etcdctl} (Debian's etcd-client), for what only etcd can say about a snapshot
 * file: its hash, revision and key count ({@code snapshot status}), and a data directory made from it ({@code
 * snapshot restore}, which also checks the integrity hash etcd appends to a snapshot taken through the API). Each
 * call is one child process, killed by pid if it outlives its limit. Stateless apart from the binary's path.
 */
final class Etcdctl {
  static final String INSTALL = "./muster etcd-install (etcd and etcdctl into the project's .cache/etcd), or"
      + " apt-get install -y etcd-client";
  private static final Duration LIMIT = Duration.ofMinutes(2);
  private static final JsonMapper JSON = JsonMapper.builder().build();

  /** {@code etcdctl snapshot status -w json}: etcd's hash of the data, its revision, keys and size. */
  record Status(long hash, long revision, long totalKeys, long totalSize) {}

  private final Path binary;

  private Etcdctl(Path binary) {
    this.binary = binary;
  }

  /**
   * The {@code etcdctl} beside the etcd this command would start (the same release: the project's cache holds both),
   * else the one on PATH (or in /usr/bin ...); a {@link Errors.UsageException} saying how to install it.
   */
  static Etcdctl locate() {
    return new Etcdctl(find().orElseThrow(() -> new Errors.UsageException(
        "etcdctl is not installed (etcd's snapshot tool, package etcd-client): " + INSTALL)));
  }

  /** Whether there is one to run. */
  static boolean available() {
    return find().isPresent();
  }

  private static Optional<Path> find() {
    try {
      Path beside = EtcdBinary.locate().resolveSibling("etcdctl");
      if (Files.isExecutable(beside)) {
        return Optional.of(beside);
      }
    } catch (EtcdLaunchException e) {
      // no etcd configured or installed: etcdctl from PATH, if any
    }
    return Executables.find("etcdctl");
  }

  /** The status of {@code snapshot}; a {@link Errors.UsageException} with etcdctl's reason when it cannot read it. */
  Status status(Path snapshot) {
    List<String> out = run("snapshot status", List.of("snapshot", "status", snapshot.toString(), "-w", "json"),
        snapshot);
    try {
      JsonNode n = JSON.readTree(String.join("\n", out));
      return new Status(n.path("hash").asLong(), n.path("revision").asLong(), n.path("totalKey").asLong(),
          n.path("totalSize").asLong());
    } catch (IOException e) {
      throw new Errors.UsageException("etcdctl snapshot status " + snapshot + " printed no JSON: " + out);
    }
  }

  /**
   * Restores {@code snapshot} into {@code dataDir} (which must not exist) as a one-member cluster with member
   * {@code name} advertising {@code peerUrl}.
   */
  void restore(Path snapshot, Path dataDir, String name, String peerUrl) {
    run("snapshot restore", List.of("snapshot", "restore", snapshot.toString(), "--data-dir", dataDir.toString(),
        "--name", name, "--initial-cluster", name + "=" + peerUrl, "--initial-advertise-peer-urls", peerUrl),
        snapshot);
  }

  /**
   * etcdctl's reason in one short line: its integrity-hash failure prints both digests as decimal byte arrays, of
   * no use to a reader, so that one is said in words.
   */
  static String readable(String why) {
    if (why.contains("expected sha256")) {
      return "the integrity hash etcd appended to the snapshot does not match its data (the file is damaged)";
    }
    return why.length() > 200 ? why.substring(0, 200) + "..." : why;
  }

  /** Runs etcdctl with API v3 and returns its stdout; its last stderr line in the error when it fails. */
  private List<String> run(String what, List<String> args, Path snapshot) {
    List<String> command = new ArrayList<>(List.of("/usr/bin/env", "ETCDCTL_API=3", binary.toString()));
    command.addAll(args);
    try (ChildProcess p = ChildProcess.start("etcdctl", command)) {
      int code = p.exitCode(LIMIT);
      if (code != 0) {
        List<String> err = p.stderr();
        String why = err.isEmpty() ? "exit " + code : readable(err.get(err.size() - 1).strip());
        throw new Errors.UsageException("etcdctl " + what + " cannot read " + snapshot + ": " + why);
      }
      return p.stdout();
    }
  }
}
