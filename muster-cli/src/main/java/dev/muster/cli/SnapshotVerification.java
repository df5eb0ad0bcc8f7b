package dev.muster.cli;

import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.muster.etcd.EtcdConfig;
import dev.muster.etcd.EtcdRegistry;
import java.nio.file.Path;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;

/**
 * The steps of {@code muster snapshot verify}, in the order a restore depends on them: the checksum (the file is
 * the one saved), etcd's own status (etcd can read it), the instances per service of the snapshot restored into a
 * private member (what a restore would bring back), and optionally the same from the live cluster (what a restore
 * would lose). A step whose input is unusable records an error and ends the run, since the later steps need it;
 * a checksum mismatch does not, so the report also says whether etcd still reads the file.
 *
 * <p>Not thread-safe; one per command run.
 */
final class SnapshotVerification {
  private final Path file;
  private final SnapshotReport report = new SnapshotReport();
  private final List<String> steps = new ArrayList<>();
  private final ObjectNode json = JsonLines.event("snapshot-verified", Instant.now());

  private SnapshotVerification(Path file) {
    this.file = file;
    json.put("file", file.toAbsolutePath().toString());
  }

  /** Runs every step that can run; {@code against} adds the live cluster {@code config} names. */
  static SnapshotVerification run(Path file, Etcdctl etcdctl, EtcdConfig config, boolean against) {
    SnapshotVerification v = new SnapshotVerification(file);
    v.checksum();
    Optional<Etcdctl.Status> status = v.status(etcdctl);
    if (status.isEmpty()) {
      return v;
    }
    Optional<ServiceCounts> snapshot = v.restored(etcdctl, config);
    if (snapshot.isPresent() && against) {
      ServiceCounts live;
      try (EtcdRegistry registry = EtcdRegistry.connect(config)) {
        live = ServiceCounts.read(registry);
      }
      v.steps.add("live      " + live.summary() + " (" + String.join(",", config.endpoints().stream().map(Object::toString).toList()) + ", revision "
          + live.revision() + ")");
      v.json.set("live", counts(live));
      v.report.compare(snapshot.get(), live);
    }
    return v;
  }

  private void checksum() {
    Path sums = Sha256File.beside(file);
    Optional<Sha256File.Entry> expected = Sha256File.read(file);
    String actual = Sha256File.of(file);
    json.put("sha256", actual);
    if (expected.isEmpty()) {
      json.put("checksum", "absent");
      report.warning("no " + sums.getFileName() + " beside " + file + ": the checksum was not checked");
      return;
    }
    boolean matches = expected.get().sha256().equals(actual);
    json.put("checksum", matches ? "ok" : "mismatch");
    if (!expected.get().name().equals(file.getFileName().toString())) {
      report.warning(sums + " is for a file named " + expected.get().name() + ", not " + file.getFileName()
          + " (renamed?): sha256sum -c would not find it");
    }
    if (matches) {
      steps.add("checksum  ok, sha256 " + actual + " as in " + sums.getFileName());
    } else {
      report.error(file + ": sha256 " + actual + " is not the " + expected.get().sha256() + " of " + sums
          + " — the file changed or was damaged since it was saved");
    }
  }

  private Optional<Etcdctl.Status> status(Etcdctl etcdctl) {
    try {
      Etcdctl.Status s = etcdctl.status(file);
      steps.add("etcd      hash " + s.hash() + ", revision " + s.revision() + ", " + s.totalKeys() + " keys, "
          + s.totalSize() + " bytes (etcdctl snapshot status)");
      json.putObject("status").put("hash", s.hash()).put("revision", s.revision()).put("totalKeys", s.totalKeys())
          .put("totalSize", s.totalSize());
      return Optional.of(s);
    } catch (Errors.UsageException e) {
      report.error(e.getMessage());
      return Optional.empty();
    }
  }

  private Optional<ServiceCounts> restored(Etcdctl etcdctl, EtcdConfig config) {
    try {
      ServiceCounts counts = RestoredSnapshot.count(etcdctl, file, config);
      steps.add("snapshot  " + counts.summary() + " (restored into a private etcd, revision " + counts.revision()
          + ")");
      counts.undecodable().forEach(k -> steps.add("! " + k));
      json.set("snapshot", counts(counts));
      return Optional.of(counts);
    } catch (Errors.UsageException e) {
      report.error(e.getMessage());
      return Optional.empty();
    }
  }

  private static ObjectNode counts(ServiceCounts counts) {
    ObjectNode node = JsonNodeFactory.instance.objectNode();
    node.put("revision", counts.revision());
    ObjectNode services = node.putObject("instances");
    counts.instances().forEach(services::put);
    ArrayNode undecodable = node.putArray("undecodable");
    counts.undecodable().forEach(undecodable::add);
    return node;
  }

  SnapshotReport report() {
    return report;
  }

  /** The steps' lines, the table, the findings, and a last line with the outcome. */
  List<String> lines() {
    List<String> lines = new ArrayList<>(steps);
    lines.addAll(report.table());
    report.findings().forEach(f -> lines.add(f.toString()));
    long errors = report.findings().stream().filter(f -> f.severity() == SnapshotReport.Severity.ERROR).count();
    int warnings = report.findings().size() - (int) errors;
    if (!report.findings().isEmpty()) {
      lines.add("not verified: " + errors + " error(s), " + warnings + " warning(s)");
    } else if (report.rows().isEmpty()) {
      lines.add("verified: checksum, etcd's status and the restore are good (--against also compares with the live"
          + " cluster)");
    } else {
      lines.add("verified: the snapshot agrees with the live cluster");
    }
    return lines;
  }

  /** One JSON object: the steps' results, the rows, the findings, the exit code. */
  ObjectNode json() {
    ArrayNode rows = json.putArray("services");
    for (SnapshotReport.Row r : report.rows()) {
      rows.addObject().put("service", r.service()).put("snapshot", r.snapshot()).put("live", r.live())
          .put("verdict", r.verdict());
    }
    ArrayNode findings = json.putArray("findings");
    report.findings().forEach(f -> findings.addObject().put("severity", f.severity().name())
        .put("message", f.message()));
    json.put("exit", report.exitCode());
    return json;
  }
}
