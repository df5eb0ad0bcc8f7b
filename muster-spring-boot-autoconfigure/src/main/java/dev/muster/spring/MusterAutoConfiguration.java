package dev.muster.spring;

import dev.muster.etcd.EtcdConfig;
import dev.muster.etcd.EtcdRegistry;
import io.micrometer.core.instrument.MeterRegistry;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBooleanProperty;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnProperty;
import org.springframework.boot.context.properties.EnableConfigurationProperties;
import org.springframework.context.annotation.Bean;

/**
 * The registry connection and the per-service clients, when {@code muster.endpoints} is set and
 * {@code muster.enabled} is not false. Every bean backs off when the application defines its own.
 */
@AutoConfiguration
@ConditionalOnProperty(prefix = "muster", name = "endpoints")
@ConditionalOnBooleanProperty(name = "muster.enabled", matchIfMissing = true)
@EnableConfigurationProperties(MusterProperties.class)
public class MusterAutoConfiguration {
  /**
   * One etcd connection for the application (jetcd's, with TLS and credentials from {@code muster.*}). jetcd
   * connects on first use, and that first use loads and starts jetcd, gRPC and Vert.x (about 1.5 s of CPU on a
   * 2-core machine); one read on a daemon thread does it now, beside the rest of the start, instead of on the
   * first health check or lookup.
   */
  @Bean(destroyMethod = "close")
  @ConditionalOnMissingBean
  public EtcdRegistry musterEtcdRegistry(MusterProperties properties) {
    EtcdRegistry registry = EtcdRegistry.connect(etcdConfig(properties));
    Thread warm = new Thread(() -> {
      try {
        registry.list(properties.namespace(), "muster-connect");
      } catch (RuntimeException e) {
        // etcd not answering yet: the registration and the caches say so in their own words
      }
    }, "muster-connect");
    warm.setDaemon(true);
    warm.start();
    return registry;
  }

  @Bean(destroyMethod = "close")
  @ConditionalOnMissingBean
  public MusterClients musterClients(EtcdRegistry registry, MusterProperties properties,
      ObjectProvider<MeterRegistry> meters) {
    return new MusterClients(registry, properties, meters.getIfAvailable());
  }

  /** {@code muster.*} as an {@link EtcdConfig}; a bad value fails here, naming the property. */
  static EtcdConfig etcdConfig(MusterProperties p) {
    EtcdConfig.Builder b = EtcdConfig.builder().endpoints(p.endpoints()).requestTimeout(p.requestTimeout());
    MusterProperties.Tls tls = p.tls();
    if (tls.cacert() != null || tls.cert() != null || tls.key() != null) {
      b.tls(tls.cacert(), tls.cert(), tls.key());
    }
    if (tls.authority() != null) {
      b.authority(tls.authority());
    }
    if (p.user() != null) {
      if (p.passwordFile() == null) {
        throw new IllegalArgumentException("muster.user is set but muster.password-file is not: give the file that"
            + " holds " + p.user() + "'s password");
      }
      b.credentials(p.user(), p.passwordFile());
    }
    EtcdConfig config = b.allowInsecureCredentials(true).build(); // refused below, naming the property
    if (config.sendsCredentialsInClear() && !p.insecureCredentials()) {
      throw new IllegalArgumentException("muster.user " + p.user() + "'s password would cross the network in clear"
          + " over http:// to " + config.endpoints() + ": use https:// endpoints, or set"
          + " muster.insecure-credentials=true knowing anyone on the path can read it");
    }
    return config.toBuilder().allowInsecureCredentials(p.insecureCredentials()).build();
  }
}
