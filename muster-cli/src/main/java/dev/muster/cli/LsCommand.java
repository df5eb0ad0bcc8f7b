package dev.muster.cli;

import dev.muster.etcd.EtcdRegistry;
import dev.muster.etcd.RegistryListing;
import dev.muster.registry.Instance;
import java.io.PrintWriter;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;
import picocli.CommandLine.Spec;

/**
 * {@code muster ls}: what the registry holds now, read once at one revision (SPEC §7). Plain output is a header
 * line, an aligned table and the keys whose values did not decode; {@code --json} is one line per instance.
 */
@Command(
    name = "ls",
    description = "List the registry's current instances of SERVICE (or of the whole namespace) and the revision.")
final class LsCommand implements Callable<Integer> {
  private static final String[] HEADER = {"SERVICE", "VERSION", "ID", "ADDRESS", "STATE", "WEIGHT", "ZONE"};

  @Spec
  CommandSpec spec;

  @Mixin
  CommonOptions common;

  @Parameters(index = "0", arity = "0..1", paramLabel = "SERVICE", description = "Service name (default: all).")
  String service;

  @Option(names = "--json", description = "One JSON object per instance and line, with \"event\":\"instance\".")
  boolean json;

  @Override
  public Integer call() {
    RegistryListing listing;
    try (EtcdRegistry registry = EtcdRegistry.connect(common.etcdConfig())) {
      listing = registry.list(common.namespace, service);
    }
    List<Instance> instances = new ArrayList<>(listing.instances());
    // lambdas, not method references: Instance's withers overload service(), version() and id()
    instances.sort(Comparator.comparing((Instance i) -> i.service()).thenComparing(i -> i.version())
        .thenComparing(i -> i.id()));
    PrintWriter out = spec.commandLine().getOut();
    if (json) {
      Instant now = Instant.now();
      instances.forEach(i -> JsonLines.print(out, EventLines.of(i, listing.revision(), now)));
      listing.problems().forEach(p -> JsonLines.print(out, EventLines.malformed(p.key(), p.reason(),
          listing.revision(), now)));
      return 0;
    }
    out.println("revision " + listing.revision() + ", " + instances.size() + " instance(s)");
    if (!instances.isEmpty()) {
      List<String[]> rows = new ArrayList<>();
      rows.add(HEADER);
      for (Instance i : instances) {
        rows.add(new String[] {i.service(), i.version(), i.id(), address(i), i.state().name(),
            Integer.toString(i.weight()), i.zone() == null ? "-" : i.zone()});
      }
      Tables.printAligned(out, rows);
    }
    listing.problems().forEach(p -> out.println("! " + printable(p.key()) + ": " + p.reason()));
    out.flush();
    return 0;
  }

  /** {@code key} with its control characters escaped (a line feed as backslash-n): a key cannot forge a line. */
  static String printable(String key) {
    StringBuilder out = new StringBuilder(key.length());
    key.chars().forEach(c -> out.append(c == '\n' ? "\\n" : c == '\r' ? "\\r" : c == '\t' ? "\\t"
        : Character.isISOControl(c) ? String.format("\\u%04x", c) : String.valueOf((char) c)));
    return out.toString();
  }

  /** {@code host:port}, with an IPv6 literal in brackets so the port stays readable. */
  static String address(Instance i) {
    return (i.address().indexOf(':') >= 0 ? "[" + i.address() + "]" : i.address()) + ":" + i.port();
  }
}
