package dev.muster.etcd;

import dev.muster.Durations;
import dev.muster.InvalidInputException;
import dev.muster.registry.RegistryLayout;
import java.net.URI;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;

/**
 * Where etcd is and how to talk to it. Immutable; build it with {@link #builder()}, {@link #of(String)} or, from a
 * user's own settings (a properties file, a framework's configuration), {@link #fromSettings(Map)}.
 *
 * <pre>{@code
 * EtcdConfig config = EtcdConfig.builder()
 *     .endpoints("http://10.0.0.1:2379,http://10.0.0.2:2379")
 *     .requestTimeout(Duration.ofSeconds(3))
 *     .credentials("orders-svc", password)
 *     .build();
 * }</pre>
 *
 * @param endpoints etcd client URLs ({@code http://host:port}); at least one
 * @param layout key layout (root prefix); default {@code /muster}
 * @param requestTimeout deadline of each etcd call made outside a registrar or cache loop (default 2 s)
 * @param credentials an etcd user and password, or null to connect without authentication (default none)
 * @param tls the CA to trust and the client certificate to present over {@code https://} endpoints, or null for
 *     plain {@code http://} (default none); {@code https://} endpoints without it trust the JVM's default CAs
 * @param watchStreams how many etcd {@code Watch} streams a connection spreads its endpoint caches' watches over,
 *     round-robin (default {@value #DEFAULT_WATCH_STREAMS}, from 1 to {@value #MAX_WATCH_STREAMS}): etcd sends one
 *     event's responses to the watches of one stream one after another, so many caches of one service on fewer
 *     streams see a change later (docs/memory-watch-fanout-k.txt); each stream costs about 1.6 kB in the client
 * @param allowInsecureCredentials whether {@code credentials} may go to {@code http://} endpoints that are not all
 *     loopback, where the password crosses the network in clear (default false: refused); when set and used, the
 *     connection logs one WARN naming the risk
 */
public record EtcdConfig(List<URI> endpoints, RegistryLayout layout, Duration requestTimeout,
    Credentials credentials, Tls tls, int watchStreams, boolean allowInsecureCredentials) {
  /** The endpoint used when neither {@code --endpoints} nor {@code MUSTER_ENDPOINTS} says otherwise. */
  public static final String DEFAULT_ENDPOINT = "http://127.0.0.1:2379";
  /** Watch streams per connection unless set (docs/memory-watch-fanout-k.txt). */
  public static final int DEFAULT_WATCH_STREAMS = 8;
  /** The most watch streams a connection may spread its caches' watches over. */
  public static final int MAX_WATCH_STREAMS = 64;

  /** The keys {@link #fromSettings(Map)} reads. */
  public static final List<String> SETTINGS = List.of("endpoints", "root", "request-timeout", "user", "password",
      "password-file", "watch-streams", "insecure-credentials");

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

    /**
     * The user with the password held in {@code passwordFile}: its first line, without the line break (as
     * {@code echo secret > file} writes it). The password never has to appear on a command line or in a log.
     *
     * @throws InvalidInputException naming the file when it is missing, unreadable or empty
     */
    public static Credentials fromPasswordFile(String user, Path passwordFile) {
      Objects.requireNonNull(passwordFile, "passwordFile");
      requireReadable("password-file", passwordFile);
      String text;
      try {
        text = Files.readString(passwordFile, java.nio.charset.StandardCharsets.UTF_8);
      } catch (java.io.IOException | java.io.UncheckedIOException e) {
        throw new InvalidInputException("password-file", passwordFile.toString(), "cannot read it ("
            + e.getMessage() + "): give a UTF-8 text file whose first line is the password");
      }
      String password = text.lines().findFirst().orElse("");
      if (password.isEmpty()) {
        throw new InvalidInputException("password-file", passwordFile.toString(),
            "its first line is empty: write the password of etcd user " + user + " on it");
      }
      return new Credentials(user, password);
    }

    @Override
    public String toString() {
      return "Credentials[user=" + user + ", password=***]";
    }
  }

  /**
   * TLS to etcd: the CA bundle that signs etcd's certificate, and for mutual TLS a client certificate with its
   * key (PEM files; the key in PKCS#8). Each file is checked readable when the value is made, so a wrong path
   * fails at configuration, naming the file.
   *
   * @param caCert the CA bundle (PEM); null to trust the JVM's default CAs
   * @param clientCert the client certificate (PEM), or null for server-only TLS
   * @param clientKey its private key (PEM, PKCS#8), given exactly when {@code clientCert} is
   * @param authority the name to check etcd's certificate against instead of the endpoint's host, or null
   */
  public record Tls(Path caCert, Path clientCert, Path clientKey, String authority) {
    public Tls {
      requireReadable("caCert", caCert);
      if ((clientCert == null) != (clientKey == null)) {
        throw new InvalidInputException(clientCert == null ? "clientCert" : "clientKey", null,
            "give the client certificate and its key together (mutual TLS), or neither");
      }
      requireReadable("clientCert", clientCert);
      requireReadable("clientKey", clientKey);
      if (authority != null && authority.isBlank()) {
        throw new InvalidInputException("authority", authority, "give a host name, or leave it unset");
      }
    }

    /**
     * The common name of the client certificate, which etcd takes as the user name under
     * {@code --client-cert-auth} when no password is given; empty without a client certificate.
     */
    public Optional<String> certificateUser() {
      if (clientCert == null) {
        return Optional.empty();
      }
      try (var in = Files.newInputStream(clientCert)) {
        var cert = (java.security.cert.X509Certificate) java.security.cert.CertificateFactory.getInstance("X.509")
            .generateCertificate(in);
        return new javax.naming.ldap.LdapName(cert.getSubjectX500Principal().getName()).getRdns().stream()
            .filter(r -> "CN".equalsIgnoreCase(r.getType())).map(r -> r.getValue().toString()).findFirst();
      } catch (java.io.IOException | java.security.cert.CertificateException | javax.naming.InvalidNameException
          | ClassCastException e) {
        return Optional.empty(); // connect() names the unreadable file; here it just has no user to show
      }
    }
  }

  private static void requireReadable(String field, Path file) {
    if (file != null && !Files.isReadable(file)) {
      throw new InvalidInputException(field, file.toString(), Files.exists(file)
          ? "the file is not readable by this process: check its permissions"
          : "no such file: give the path of " + ("password-file".equals(field) ? "a password file" : "a PEM file"));
    }
  }

  /** Without TLS; kept for callers of the four-component form. */
  public EtcdConfig(List<URI> endpoints, RegistryLayout layout, Duration requestTimeout, Credentials credentials) {
    this(endpoints, layout, requestTimeout, credentials, null);
  }

  /** With {@value #DEFAULT_WATCH_STREAMS} watch streams; kept for callers of the five-component form. */
  public EtcdConfig(List<URI> endpoints, RegistryLayout layout, Duration requestTimeout, Credentials credentials,
      Tls tls) {
    this(endpoints, layout, requestTimeout, credentials, tls, DEFAULT_WATCH_STREAMS);
  }

  /** Refusing credentials in clear off loopback; kept for callers of the six-component form. */
  public EtcdConfig(List<URI> endpoints, RegistryLayout layout, Duration requestTimeout, Credentials credentials,
      Tls tls, int watchStreams) {
    this(endpoints, layout, requestTimeout, credentials, tls, watchStreams, false);
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
    if (watchStreams < 1 || watchStreams > MAX_WATCH_STREAMS) {
      throw new InvalidInputException("watchStreams", watchStreams, "use 1 to " + MAX_WATCH_STREAMS
          + " Watch streams per connection (default " + DEFAULT_WATCH_STREAMS + ")");
    }
    long secure = endpoints.stream().filter(u -> "https".equals(u.getScheme())).count();
    if (secure != 0 && secure != endpoints.size()) {
      throw new InvalidInputException("endpoints", endpoints.toString(), "use https:// for every endpoint or for"
          + " none: one connection cannot mix TLS and plain text");
    }
    if (tls != null && secure == 0) {
      throw new InvalidInputException("endpoints", endpoints.toString(), "use https:// endpoints with TLS"
          + " settings (a CA or a client certificate was given)");
    }
    if (credentials != null && secure == 0 && !allowInsecureCredentials && !endpoints.stream()
        .allMatch(EtcdConfig::isLoopback)) {
      throw new InvalidInputException("endpoints", endpoints.toString(), "etcd user " + credentials.user()
          + "'s password would cross the network in clear over http://: use https:// endpoints, or pass"
          + " --insecure-credentials (allowInsecureCredentials) knowing anyone on the path can read it");
    }
  }

  /**
   * Whether this configuration sends an etcd password in clear beyond this machine: credentials over
   * {@code http://} endpoints not all loopback (only possible with {@link #allowInsecureCredentials()}).
   */
  public boolean sendsCredentialsInClear() {
    return credentials != null && endpoints.stream().noneMatch(u -> "https".equals(u.getScheme()))
        && !endpoints.stream().allMatch(EtcdConfig::isLoopback);
  }

  /**
   * Whether {@code endpoint}'s host is this machine: {@code localhost}, an address in 127.0.0.0/8 or {@code ::1}.
   * Literals only; a name is never resolved (what it resolves to may change, and DNS may lie).
   */
  static boolean isLoopback(URI endpoint) {
    String host = endpoint.getHost();
    if (host == null) {
      return false;
    }
    if (host.equalsIgnoreCase("localhost")) {
      return true;
    }
    boolean ipv6 = host.startsWith("[") && host.endsWith("]");
    if (!ipv6 && !host.matches("\\d{1,3}(\\.\\d{1,3}){3}")) {
      return false; // a host name: InetAddress.getByName would resolve it
    }
    try {
      return java.net.InetAddress.getByName(ipv6 ? host.substring(1, host.length() - 1) : host).isLoopbackAddress();
    } catch (java.net.UnknownHostException e) {
      return false;
    }
  }

  /**
   * Parses a comma-separated endpoint list such as {@code http://127.0.0.1:2379,http://127.0.0.1:2389}; every
   * entry must be {@code http://HOST:PORT}.
   */
  public static EtcdConfig of(String endpoints) {
    return builder().endpoints(endpoints).build();
  }

  /**
   * {@value #DEFAULT_ENDPOINT}, root {@code /muster}, 2 s request timeout, no authentication,
   * {@value #DEFAULT_WATCH_STREAMS} watch streams.
   */
  public static EtcdConfig defaults() {
    return builder().build();
  }

  /** A builder holding the defaults of {@link #defaults()}. */
  public static Builder builder() {
    return new Builder();
  }

  /** A builder holding this configuration's values. */
  public Builder toBuilder() {
    Builder b = new Builder();
    b.endpoints = endpoints;
    b.layout = layout;
    b.requestTimeout = requestTimeout;
    b.credentials = credentials;
    b.tls = tls;
    b.watchStreams = watchStreams;
    b.allowInsecureCredentials = allowInsecureCredentials;
    return b;
  }

  /**
   * A configuration from plain settings, as a user keeps them (for example under a prefix of their own
   * properties): {@code endpoints} (comma-separated URLs), {@code root} (key root), {@code request-timeout}
   * ({@code 2s}), {@code user} with {@code password} or {@code password-file} (a file whose first line is the
   * password), {@code watch-streams} ({@code 8}), {@code insecure-credentials} ({@code true} to allow a password
   * over {@code http://} endpoints not all loopback; default {@code false}). A missing key keeps its default.
   *
   * @throws InvalidInputException for an unknown key (a misspelt setting is never ignored) or a bad value, named
   */
  public static EtcdConfig fromSettings(Map<String, String> settings) {
    Objects.requireNonNull(settings, "settings");
    for (String key : settings.keySet()) {
      if (!SETTINGS.contains(key)) {
        throw new InvalidInputException("setting", key, "use one of " + String.join(", ", SETTINGS));
      }
    }
    Builder b = builder();
    if (settings.containsKey("endpoints")) {
      b.endpoints(settings.get("endpoints"));
    }
    if (settings.containsKey("root")) {
      b.layout(new RegistryLayout(settings.get("root")));
    }
    if (settings.containsKey("request-timeout")) {
      b.requestTimeout(Durations.parse("request-timeout", settings.get("request-timeout")));
    }
    if (settings.containsKey("watch-streams")) {
      String n = settings.get("watch-streams");
      try {
        b.watchStreams(Integer.parseInt(n.strip()));
      } catch (NumberFormatException e) {
        throw new InvalidInputException("watch-streams", n, "use a whole number from 1 to " + MAX_WATCH_STREAMS);
      }
    }
    if (settings.containsKey("insecure-credentials")) {
      String v = settings.get("insecure-credentials").strip();
      if (!v.equalsIgnoreCase("true") && !v.equalsIgnoreCase("false")) {
        throw new InvalidInputException("insecure-credentials", v, "use true or false (default false)");
      }
      b.allowInsecureCredentials(Boolean.parseBoolean(v));
    }
    String user = settings.get("user");
    String password = settings.get("password");
    String passwordFile = settings.get("password-file");
    if (password != null && passwordFile != null) {
      throw new InvalidInputException("password-file", passwordFile, "give password or password-file, not both");
    }
    if (passwordFile != null) {
      b.credentials(user, Path.of(passwordFile));
    } else if (user != null || password != null) {
      b.credentials(user, password);
    }
    return b.build();
  }

  /**
   * Who etcd will take this client for, in words for messages: {@code etcd user "orders"} (a password),
   * {@code etcd user "orders" (client certificate CN)} under client-certificate auth, or {@code no etcd user}.
   */
  public String identity() {
    if (credentials != null) {
      return "etcd user \"" + credentials.user() + "\"";
    }
    return Optional.ofNullable(tls).flatMap(Tls::certificateUser)
        .map(cn -> "etcd user \"" + cn + "\" (client certificate CN)").orElse("no etcd user");
  }

  public EtcdConfig withLayout(RegistryLayout layout) {
    return new EtcdConfig(endpoints, layout, requestTimeout, credentials, tls, watchStreams,
        allowInsecureCredentials);
  }

  public EtcdConfig withRequestTimeout(Duration requestTimeout) {
    return new EtcdConfig(endpoints, layout, requestTimeout, credentials, tls, watchStreams,
        allowInsecureCredentials);
  }

  /** Authenticates as etcd user {@code user} (etcd's simple or JWT tokens; jetcd renews them). */
  public EtcdConfig withCredentials(String user, String password) {
    return new EtcdConfig(endpoints, layout, requestTimeout, new Credentials(user, password), tls, watchStreams,
        allowInsecureCredentials);
  }

  /**
   * Builds an {@link EtcdConfig}; every value is checked in {@link #build()} (or, for endpoint text and
   * credentials, when given), and a bad one is refused with its name. Not thread-safe.
   */
  public static final class Builder {
    private List<URI> endpoints = List.of(URI.create(DEFAULT_ENDPOINT));
    private RegistryLayout layout = RegistryLayout.defaults();
    private Duration requestTimeout = Duration.ofSeconds(2);
    private Credentials credentials;
    private Tls tls;
    private int watchStreams = DEFAULT_WATCH_STREAMS;
    private boolean allowInsecureCredentials;

    private Builder() {}

    /** A comma-separated list of {@code http://HOST:PORT} URLs (default {@value #DEFAULT_ENDPOINT}). */
    public Builder endpoints(String commaSeparated) {
      this.endpoints = parseEndpoints(commaSeparated);
      return this;
    }

    public Builder endpoints(List<URI> uris) {
      this.endpoints = Objects.requireNonNull(uris, "endpoints");
      return this;
    }

    /** The key layout (default root {@code /muster}). */
    public Builder layout(RegistryLayout layout) {
      this.layout = layout;
      return this;
    }

    /** Deadline of each etcd call made outside a registrar or cache loop (default 2 s). */
    public Builder requestTimeout(Duration requestTimeout) {
      this.requestTimeout = requestTimeout;
      return this;
    }

    /** Authenticates as etcd user {@code user} (default: no authentication). */
    public Builder credentials(String user, String password) {
      this.credentials = new Credentials(user, password);
      return this;
    }

    /**
     * TLS to {@code https://} endpoints: trust {@code caCert} (null: the JVM's default CAs) and, for mutual TLS,
     * present {@code clientCert} with {@code clientKey} (both null for server-only TLS).
     */
    public Builder tls(Path caCert, Path clientCert, Path clientKey) {
      this.tls = new Tls(caCert, clientCert, clientKey, tls == null ? null : tls.authority());
      return this;
    }

    /** Checks etcd's certificate against {@code authority} instead of each endpoint's host. */
    public Builder authority(String authority) {
      this.tls = tls == null ? new Tls(null, null, null, authority)
          : new Tls(tls.caCert(), tls.clientCert(), tls.clientKey(), authority);
      return this;
    }

    /** Authenticates as etcd user {@code user} with the password on the first line of {@code passwordFile}. */
    public Builder credentials(String user, Path passwordFile) {
      this.credentials = Credentials.fromPasswordFile(user, passwordFile);
      return this;
    }

    /**
     * Spreads the endpoint caches' watches over {@code watchStreams} etcd {@code Watch} streams per connection,
     * round-robin (default {@value EtcdConfig#DEFAULT_WATCH_STREAMS}, from 1 to {@value EtcdConfig#MAX_WATCH_STREAMS}).
     */
    public Builder watchStreams(int watchStreams) {
      this.watchStreams = watchStreams;
      return this;
    }

    /**
     * Allows credentials over {@code http://} endpoints that are not all loopback (default false: refused), where
     * anyone on the path can read the password; the connection then logs one WARN naming the risk.
     */
    public Builder allowInsecureCredentials(boolean allow) {
      this.allowInsecureCredentials = allow;
      return this;
    }

    /** Connects without authentication. */
    public Builder noCredentials() {
      this.credentials = null;
      return this;
    }

    public EtcdConfig build() {
      return new EtcdConfig(endpoints, layout, requestTimeout, credentials, tls, watchStreams,
          allowInsecureCredentials);
    }
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
        throw new InvalidInputException("endpoints", s, "write each endpoint as http://HOST:PORT or https://HOST:PORT");
      }
      boolean schemeOk = "http".equals(uri.getScheme()) || "https".equals(uri.getScheme());
      if (!schemeOk || uri.getHost() == null || uri.getPort() < 1
          || (uri.getPath() != null && !uri.getPath().isEmpty() && !"/".equals(uri.getPath()))) {
        throw new InvalidInputException("endpoints", s, "write each endpoint as http://HOST:PORT or https://HOST:PORT");
      }
      uris.add(URI.create(uri.getScheme() + "://" + uri.getHost() + ":" + uri.getPort()));
    }
    return uris;
  }
}
