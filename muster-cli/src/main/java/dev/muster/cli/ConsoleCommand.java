package dev.muster.cli;

import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.muster.MusterException;
import dev.muster.console.ConsoleConfig;
import dev.muster.console.ConsoleServer;
import dev.muster.etcd.EtcdMaintenance;
import dev.muster.etcd.EtcdRegistry;
import java.io.PrintWriter;
import java.io.UncheckedIOException;
import java.nio.file.Path;
import java.time.Duration;
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
 * listens (with the login token in its fragment unless {@code --token-file}), then runs until Ctrl-C/SIGTERM.
 */
@Command(name = "console", description = {"Serve a live web console of the registry (namespaces, services,"
    + " instances, events, the etcd cluster): open the URL it prints. Read-only unless --allow-drain.",
    "Always behind a login, loopback too: the URL printed in the serving line carries a random token"
        + " (http://IP:PORT/#token=...; opening it logs the browser in), or give your own with --token-file."
        + " Programs send Authorization: Bearer TOKEN. Refused: a request whose Host is not the console's own"
        + " address, localhost or an --allowed-host (421, against DNS rebinding); an API request without the token"
        + " (401); a drain from another page (Origin, 403); more requests than the queue holds (503); a request"
        + " slower than --read-timeout to arrive (the connection is closed)."})
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

  @Option(names = "--token-file", paramLabel = "FILE",
      description = "Read the login token from the first line of FILE (at least 16 characters of A-Z a-z 0-9 . _ ~"
          + " + / = -, such as openssl rand -hex 32 > FILE; chmod 600 FILE: a file its group or others may read is"
          + " refused). The serving line then does not print it. Default: a random token per start, printed in"
          + " the serving line's URL.")
  Path tokenFile;

  @Option(names = "--allowed-host", paramLabel = "NAME[:PORT]",
      description = "Also answer to this name in the Host header (the name browsers use to reach the console, e.g."
          + " behind a proxy); repeatable. Without a port, the console's own. Always allowed: the bound IP, and"
          + " localhost, 127.0.0.1 and [::1] on a loopback or wildcard bind (and every interface's IP on a"
          + " wildcard bind); any other Host is refused (421).")
  List<String> allowedHosts = List.of();

  @Option(names = "--show-leases", defaultValue = "false",
      description = "Show each instance's etcd lease id on the service page (default ${DEFAULT-VALUE}: hidden; TTLs"
          + " are always shown).")
  boolean showLeases;

  @Option(names = "--read-timeout", paramLabel = "DURATION", defaultValue = "10s",
      converter = DurationConverter.class,
      description = "How long a request may take to arrive, headers and body, before its connection is closed;"
          + " whole seconds (default ${DEFAULT-VALUE}).")
  Duration readTimeout;

  @Option(names = "--quota", paramLabel = "SIZE", defaultValue = "2GiB", converter = SizeConverter.class,
      description = "etcd's backend quota, which the DB size is shown against; etcd 3.4 does not report it"
          + " (default ${DEFAULT-VALUE}, etcd's own default).")
  long quota;

  @Override
  public Integer call() throws InterruptedException {
    ConsoleConfig config;
    try {
      ConsoleConfig.Builder b = ConsoleConfig.builder().listen(HostPort.listenAddress(listen, "8080"))
          .namespaces(namespaces).allowDrain(allowDrain).quota(quota).trustedKeys(trust.keys())
          .allowedHosts(allowedHosts).showLeases(showLeases).readTimeout(readTimeout);
      if (tokenFile != null) {
        b.tokenFile(tokenFile);
      }
      config = b.build();
    } catch (MusterException e) {
      throw new Errors.UsageException(flagNames(e.getMessage()));
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
    if (tokenFile == null) {
      line.put("url", console.loginUrl().toString()); // printed once: opening it logs in
    } else {
      line.put("url", console.url().toString());
      line.put("login", "paste the token from " + tokenFile);
    }
    line.put("port", console.address().getPort());
    line.put("allowDrain", allowDrain);
    line.put("showLeases", showLeases);
    namespaces.forEach(line.putArray("namespaces")::add);
    JsonLines.print(out, line);
    stop.await();
    return 0;
  }

  /** The config's field names as this command's flags, so the one line names what to change. */
  private static String flagNames(String message) {
    return message.replace("tokenFile ", "--token-file ").replace("allowedHosts ", "--allowed-host ")
        .replace("readTimeout ", "--read-timeout ");
  }
}
