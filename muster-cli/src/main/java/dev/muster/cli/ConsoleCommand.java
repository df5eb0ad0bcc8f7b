package dev.muster.cli;

import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.muster.MusterException;
import dev.muster.console.ConsoleConfig;
import dev.muster.console.ConsoleServer;
import dev.muster.etcd.EtcdMaintenance;
import dev.muster.etcd.EtcdRegistry;
import java.io.PrintWriter;
import java.io.UncheckedIOException;
import java.time.Instant;
import java.util.List;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;

/**
 * {@code muster console}: the live web console. Prints one {@code "event":"serving"} JSON line with the URL once it
 * listens, then runs until Ctrl-C/SIGTERM.
 */
@Command(name = "console", description = "Serve a live web console of the registry (namespaces, services, instances,"
    + " events, the etcd cluster): open the URL it prints. Read-only unless --allow-drain.")
final class ConsoleCommand implements Callable<Integer> {
  @Spec
  CommandSpec spec;

  @Mixin
  EtcdOptions etcd;

  @Mixin
  TrustKeyOptions trust;

  @Option(names = "--listen", paramLabel = "IP:PORT", defaultValue = "127.0.0.1:8080",
      description = "Address of the web server; an IP literal, port 0 picks a free one (default ${DEFAULT-VALUE}).")
  String listen;

  @Option(names = "--namespace", paramLabel = "NS", split = ",",
      description = "Namespaces shown; repeat or separate with commas (default: all namespaces found).")
  List<String> namespaces = List.of();

  @Option(names = "--allow-drain", defaultValue = "false",
      description = "Offer a Drain button for UP instances; etcd must grant the user write access (default"
          + " ${DEFAULT-VALUE}: read-only).")
  boolean allowDrain;

  @Option(names = "--quota", paramLabel = "SIZE", defaultValue = "2GiB", converter = SizeConverter.class,
      description = "etcd's backend quota, which the DB size is shown against; etcd 3.4 does not report it"
          + " (default ${DEFAULT-VALUE}, etcd's own default).")
  long quota;

  @Override
  public Integer call() throws InterruptedException {
    ConsoleConfig config;
    try {
      config = ConsoleConfig.builder().listen(HostPort.listenAddress(listen, "8080")).namespaces(namespaces)
          .allowDrain(allowDrain).quota(quota).trustedKeys(trust.keys()).build();
    } catch (MusterException e) {
      throw new Errors.UsageException(e.getMessage());
    }
    EtcdRegistry registry = EtcdRegistry.connect(etcd.etcdConfig());
    EtcdMaintenance maintenance = EtcdMaintenance.connect(registry.config());
    ConsoleServer console;
    try {
      console = ConsoleServer.start(registry, maintenance, config);
    } catch (UncheckedIOException e) {
      maintenance.close();
      registry.close();
      throw new Errors.UsageException("--listen " + listen + ": " + e.getMessage());
    }
    StopOnSignal stop = StopOnSignal.install("muster-console-stop", console::close, maintenance::close,
        registry::close);
    PrintWriter out = spec.commandLine().getOut();
    ObjectNode line = JsonLines.event("serving", Instant.now());
    line.put("url", console.url().toString());
    line.put("port", console.address().getPort());
    line.put("allowDrain", allowDrain);
    namespaces.forEach(line.putArray("namespaces")::add);
    JsonLines.print(out, line);
    stop.await();
    return 0;
  }
}
