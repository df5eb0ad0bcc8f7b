package dev.muster.cli;

import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.muster.RegistryUnavailableException;
import dev.muster.etcd.EtcdConfig;
import dev.muster.etcd.EtcdMaintenance;
import dev.muster.etcd.EtcdMaintenance.MemberStatus;
import java.io.PrintWriter;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;
import picocli.CommandLine.Spec;

/**
 * {@code muster snapshot save FILE} and {@code muster snapshot verify FILE [--against]} (docs/snapshots.md): a
 * snapshot through etcd's maintenance API with its SHA-256 beside it, and a check that a snapshot holds what a
 * restore needs, by restoring it into a private member and counting instances per service with Muster's listing.
 */
@Command(name = "snapshot", description = "Save an etcd snapshot with its checksum, or verify one (checksum, etcd's"
    + " status, instances per service restored, and with --against the live cluster's).",
    subcommands = {SnapshotCommand.Save.class, SnapshotCommand.Verify.class})
final class SnapshotCommand implements Runnable {
  private static final Duration STATUS_TIMEOUT = Duration.ofSeconds(3);

  @Spec
  CommandSpec spec;

  @Option(names = {"-h", "--help"}, usageHelp = true, description = "Show this help and exit.")
  boolean help;

  @Override
  public void run() {
    spec.commandLine().usage(spec.commandLine().getOut());
  }

  /** What both subcommands have: their spec (for output), how to reach etcd, and the snapshot file. */
  abstract static class Subcommand implements Callable<Integer> {
    @Spec
    CommandSpec spec;

    @Mixin
    EtcdOptions etcd;

    @Parameters(index = "0", paramLabel = "FILE", description = "The snapshot file.")
    Path file;
  }

  @Command(name = "save", description = "Stream a snapshot from the leader (else the first member that answers) into"
      + " FILE.tmp, fsync, write FILE.sha256 (sha256sum format), then rename to FILE.")
  static final class Save extends Subcommand {
    @Option(names = "--force", description = "Replace FILE if it exists (default: refuse).")
    boolean force;

    @Option(names = "--timeout", paramLabel = "D", defaultValue = "10m", converter = DurationConverter.class,
        description = "Longest the whole snapshot stream may take (default ${DEFAULT-VALUE}).")
    Duration timeout;

    @Option(names = "--json", description = "Print one JSON object (\"event\":\"snapshot-saved\") instead of a line.")
    boolean json;

    @Override
    public Integer call() {
      SnapshotFile.checkTarget(file, force);
      EtcdConfig config = etcd.etcdConfig();
      long started = System.nanoTime();
      MemberStatus source = source(config);
      SnapshotFile.Saved saved;
      try (EtcdMaintenance member = EtcdMaintenance.connect(config.toBuilder()
          .endpoints(List.of(source.endpoint())).build())) {
        saved = SnapshotFile.write(file, force, spec.commandLine().getErr(), out -> member.snapshot(out, timeout));
      }
      Optional<Etcdctl.Status> status = Etcdctl.available()
          ? Optional.of(Etcdctl.locate().status(file)) : Optional.empty();
      Duration took = Duration.ofNanos(System.nanoTime() - started);
      print(saved, status, source, took);
      if (status.isEmpty()) {
        spec.commandLine().getErr().println("muster: WARNING  no revision: etcdctl, which reads it from the file, is"
            + " not installed (" + Etcdctl.INSTALL + ")");
      }
      return 0;
    }

    private void print(SnapshotFile.Saved saved, Optional<Etcdctl.Status> status, MemberStatus source, Duration took) {
      PrintWriter out = spec.commandLine().getOut();
      String member = source.memberId() + " (" + source.endpoint() + (source.isLeader() ? ", leader" : "") + ")";
      if (json) {
        ObjectNode line = JsonLines.event("snapshot-saved", Instant.now());
        line.put("file", saved.file().toAbsolutePath().toString());
        line.put("bytes", saved.bytes());
        line.put("sha256", saved.sha256());
        status.ifPresentOrElse(s -> line.put("revision", s.revision()), () -> line.putNull("revision"));
        line.put("member", source.memberId());
        line.put("endpoint", source.endpoint().toString());
        line.put("leader", source.isLeader());
        line.put("millis", took.toMillis());
        JsonLines.print(out, line);
        return;
      }
      out.println("saved " + saved.file() + ": " + saved.bytes() + " bytes, sha256 " + saved.sha256() + ", revision "
          + status.map(s -> Long.toString(s.revision())).orElse("?") + ", from member " + member + ", "
          + String.format("%.2f s", took.toMillis() / 1000.0));
      out.flush();
    }
  }

  /**
   * The member to stream from: the leader, which has applied everything committed, else the first that answers (a
   * follower may lag; seed 001 saw one 10 s behind). A {@link RegistryUnavailableException} naming every endpoint
   * and why when none answers.
   */
  static MemberStatus source(EtcdConfig config) {
    List<MemberStatus> statuses;
    try (EtcdMaintenance etcd = EtcdMaintenance.connect(config)) {
      statuses = etcd.status(STATUS_TIMEOUT);
    }
    return statuses.stream().filter(MemberStatus::isLeader).findFirst()
        .or(() -> statuses.stream().filter(MemberStatus::answered).findFirst())
        .orElseThrow(() -> new RegistryUnavailableException("no etcd member answers: " + String.join("; ",
            statuses.stream().map(s -> s.endpoint() + " (" + s.failure() + ")").toList()), null));
  }

  @Command(name = "verify", description = "Check a snapshot: FILE.sha256, etcdctl snapshot status, the instances per"
      + " service once restored into a private etcd, and with --against those of the live cluster. Exit 0 when all"
      + " agree, 1 with warnings only, 2 on any error (bad checksum, unreadable snapshot, a service that differs).")
  static final class Verify extends Subcommand {
    @Mixin
    EtcdBinaryOptions etcdBinary;

    @Option(names = "--against", description = "Also count the live cluster's instances (the one --endpoints or"
        + " $MUSTER_ENDPOINTS names, with the TLS and auth options) and name each service that differs (default:"
        + " the snapshot alone).")
    boolean against;

    @Option(names = "--json", description = "Print one JSON object (\"event\":\"snapshot-verified\") instead of"
        + " lines.")
    boolean json;

    @Override
    public Integer call() {
      if (!Files.exists(file)) {
        throw new Errors.UsageException("no snapshot " + file + ": the file does not exist");
      }
      if (Files.isDirectory(file)) {
        throw new Errors.UsageException(file + " is a directory, not a snapshot file");
      }
      EtcdConfig config = etcd.etcdConfig();
      Etcdctl etcdctl = Etcdctl.locate();
      SnapshotVerification v = SnapshotVerification.run(file, etcdctl, config, against);
      PrintWriter out = spec.commandLine().getOut();
      if (json) {
        JsonLines.print(out, v.json());
      } else {
        v.lines().forEach(out::println);
        out.flush();
      }
      return v.report().exitCode();
    }
  }
}
