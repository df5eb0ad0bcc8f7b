package dev.muster.cli;

import picocli.CommandLine.Option;

/**
 * The options every registry command takes (SPEC §7): how to reach etcd ({@link EtcdOptions}) and which namespace
 * to use. A picocli mixin; one instance per parsed command, confined to the thread that runs it.
 */
final class CommonOptions extends EtcdOptions {
  @Option(names = "--namespace", paramLabel = "NAME", defaultValue = "default",
      description = "Registry namespace (default ${DEFAULT-VALUE}).")
  String namespace;
}
