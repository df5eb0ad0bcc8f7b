package dev.muster.conformance;

import dev.muster.etcd.EtcdRegistry;
import java.util.ArrayList;
import java.util.List;

/** Every consumer adapter of one test, on one registry, in the conformance table's column order; closed together. */
final class Consumers implements AutoCloseable {
  final ClientAdapter client;
  final List<Adapter> all = new ArrayList<>();
  final SpringConsumers spring;
  final ConsoleAdapter console;

  Consumers(EtcdRegistry registry, Adapter.Setup setup) {
    client = new ClientAdapter(registry, setup);
    all.add(client);
    all.add(new GrpcAdapter(registry, setup));
    spring = new SpringConsumers(setup);
    all.add(spring.discovery());
    all.add(spring.loadBalancer());
    all.add(new DnsAdapter(registry, setup));
    console = new ConsoleAdapter(registry, setup);
    all.add(console);
  }

  /** The adapters that make calls (or picks) one at a time, where shares and failed calls mean something. */
  List<Adapter> calling() {
    return all.stream().filter(a -> a instanceof ClientAdapter || a instanceof GrpcAdapter
        || a.column().equals("Spring LoadBalancer")).toList();
  }

  @Override
  public void close() {
    for (Adapter a : all) {
      try {
        a.close();
      } catch (RuntimeException e) {
        System.out.println("[conformance] closing " + a.column() + ": " + e);
      }
    }
    spring.close();
  }
}
