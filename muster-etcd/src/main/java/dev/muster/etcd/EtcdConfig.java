package dev.muster.etcd;

import dev.muster.InvalidInputException;
import dev.muster.registry.RegistryLayout;
import java.net.URI;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;

/**
 * Where etcd is and how to talk to it. Immutable.
 *
 * @param endpoints etcd client URLs ({@code http://host:port}); at least one
 * @param layout key layout (root prefix); default {@code /muster}
 * @param requestTimeout deadline of each etcd call made outside a registrar or cache loop (default 2 s)
 * @param credentials an etcd user and password, or null to connect without authentication (default none)
 */
public record EtcdConfig(List<URI> endpoints, RegistryLayout layout, Duration requestTimeout,
    Credentials credentials) {
  /** The endpoint used when neither {@code --endpoints} nor {@code MUSTER_ENDPOINTS} says otherwise. */
  public static final String DEFAULT_ENDPOINT = "http://127.0.0.1:2379";

  /**
   * An etcd user and its password; {@link #toString()} never shows the password.
   *
   * @param user the etcd user name
   * @param password its password
   */
  public record Credentials(String user, String password) {
    public Credentials {
      if (user == null || user.isBlank()) {
        throw new InvalidInputException("user", user == null ? "" : user, "give the etcd user name");
      }
      if (password == null || password.isEmpty()) {
        throw new InvalidInputException("password", "(empty)", "give the password of etcd user " + user);
      }
    }

    @Override
    public String toString() {
      return "Credentials[user=" + user + ", password=***]";
    }
  }

  public EtcdConfig {
    Objects.requireNonNull(endpoints, "endpoints");
    Objects.requireNonNull(layout, "layout");
    Objects.requireNonNull(requestTimeout, "requestTimeout");
    if (endpoints.isEmpty()) {
      throw new InvalidInputException("endpoints", "", "give at least one etcd URL such as " + DEFAULT_ENDPOINT);
    }
    endpoints = List.copyOf(endpoints);
    if (requestTimeout.isNegative() || requestTimeout.isZero()) {
      throw new InvalidInputException("requestTimeout", requestTimeout, "use a positive duration");
    }
  }

  /**
   * Parses a comma-separated endpoint list such as {@code http://127.0.0.1:2379,http://127.0.0.1:2389}; every
   * entry must be {@code http://HOST:PORT}.
   */
  public static EtcdConfig of(String endpoints) {
    return new EtcdConfig(parseEndpoints(endpoints), RegistryLayout.defaults(), Duration.ofSeconds(2), null);
  }

  public EtcdConfig withLayout(RegistryLayout layout) {
    return new EtcdConfig(endpoints, layout, requestTimeout, credentials);
  }

  public EtcdConfig withRequestTimeout(Duration requestTimeout) {
    return new EtcdConfig(endpoints, layout, requestTimeout, credentials);
  }

  /** Authenticates as etcd user {@code user} (etcd's simple or JWT tokens; jetcd renews them). */
  public EtcdConfig withCredentials(String user, String password) {
    return new EtcdConfig(endpoints, layout, requestTimeout, new Credentials(user, password));
  }

  /** Splits and checks a comma-separated endpoint list. */
  public static List<URI> parseEndpoints(String value) {
    if (value == null || value.isBlank()) {
      throw new InvalidInputException("endpoints", value == null ? "" : value,
          "give at least one etcd URL such as " + DEFAULT_ENDPOINT);
    }
    List<URI> uris = new ArrayList<>();
    for (String part : value.split(",")) {
      String s = part.trim();
      URI uri;
      try {
        uri = URI.create(s);
      } catch (IllegalArgumentException e) {
        throw new InvalidInputException("endpoints", s, "write each endpoint as http://HOST:PORT");
      }
      if (!"http".equals(uri.getScheme()) || uri.getHost() == null || uri.getPort() < 1
          || (uri.getPath() != null && !uri.getPath().isEmpty() && !"/".equals(uri.getPath()))) {
        throw new InvalidInputException("endpoints", s, "write each endpoint as http://HOST:PORT"
            + " (TLS is not supported yet)");
      }
      uris.add(URI.create("http://" + uri.getHost() + ":" + uri.getPort()));
    }
    return uris;
  }
}
