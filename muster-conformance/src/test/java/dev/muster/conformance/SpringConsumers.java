package dev.muster.conformance;

import dev.muster.spring.MusterClients;
import dev.muster.spring.MusterLoadBalancer;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.Map;
import java.util.Set;
import org.springframework.boot.Banner;
import org.springframework.boot.SpringBootConfiguration;
import org.springframework.boot.WebApplicationType;
import org.springframework.boot.autoconfigure.EnableAutoConfiguration;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.cloud.client.ServiceInstance;
import org.springframework.cloud.client.discovery.DiscoveryClient;
import org.springframework.cloud.client.loadbalancer.Response;
import org.springframework.context.ConfigurableApplicationContext;

/**
 * A real Spring Boot application context with the Muster starter's auto-configuration, configured only by properties
 * (trusted keys, maxStale, a gRPC health probe, slow start), and its two consumer faces: the
 * {@link DiscoveryClient} bean and the starter's {@link MusterLoadBalancer} for the service.
 */
final class SpringConsumers implements AutoCloseable {
  private final ConfigurableApplicationContext context;

  /** The application: auto-configuration only. */
  @SpringBootConfiguration
  @EnableAutoConfiguration
  static class App {}

  SpringConsumers(Adapter.Setup setup) {
    Map<String, Object> p = new LinkedHashMap<>();
    p.put("muster.endpoints", setup.endpoints());
    p.put("muster.namespace", setup.namespace());
    p.put("muster.discovery.version", "v1");
    if (setup.trustKey() != null) {
      p.put("muster.discovery.trust-keys[0]", setup.trustKey().toString());
    }
    if (setup.maxStale() != null) {
      p.put("muster.discovery.max-stale", setup.maxStale().toMillis() + "ms");
    }
    p.put("muster.health.probe", "grpc");
    p.put("muster.health.interval", "500ms");
    p.put("muster.health.timeout", "400ms");
    p.put("muster.loadbalancer.slow-start", setup.slowStart().toMillis() + "ms");
    p.put("spring.cloud.service-registry.auto-registration.enabled", "false");
    p.put("spring.main.banner-mode", "off");
    context = new SpringApplicationBuilder(App.class).web(WebApplicationType.NONE).bannerMode(Banner.Mode.OFF)
        .properties(p).run();
  }

  /** The application's cache of the service (the one its DiscoveryClient and LoadBalancer read). */
  dev.muster.cache.EndpointCache cache() {
    return context.getBean(MusterClients.class).client(Providers.SERVICE).cache();
  }

  Adapter discovery() {
    DiscoveryClient dc = context.getBean(DiscoveryClient.class);
    return new Adapter() {
      @Override
      public String column() {
        return "Spring DiscoveryClient";
      }

      @Override
      public Observation observe() {
        Set<String> ids = new LinkedHashSet<>();
        for (ServiceInstance i : dc.getInstances(Providers.SERVICE)) {
          ids.add(i.getInstanceId());
        }
        // a list has no refusal but its emptiness: what FAIL_CLOSED leaves a caller of getInstances
        return Observation.listing(ids, ids.isEmpty() ? 1 : 0, 0, "");
      }

      @Override
      public void close() {
      }
    };
  }

  Adapter loadBalancer() {
    MusterLoadBalancer lb = new MusterLoadBalancer(Providers.SERVICE, context.getBean(MusterClients.class));
    return new Adapter() {
      @Override
      public String column() {
        return "Spring LoadBalancer";
      }

      @Override
      public Observation observe() {
        Map<String, Integer> ids = new java.util.TreeMap<>();
        int none = 0;
        for (int i = 0; i < ClientAdapter.CALLS; i++) {
          Response<ServiceInstance> r = lb.choose(null).block(Duration.ofSeconds(10));
          if (r != null && r.hasServer()) {
            ids.merge(r.getServer().getInstanceId(), 1, Integer::sum);
          } else {
            none++;
          }
        }
        return new Observation(ids, none, 0, "");
      }

      @Override
      public void close() {
      }
    };
  }

  @Override
  public void close() {
    context.close();
  }
}
