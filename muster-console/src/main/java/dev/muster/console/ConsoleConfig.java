package dev.muster.console;

import dev.muster.InvalidInputException;
import dev.muster.registry.Names;
import dev.muster.sign.TrustedKey;
import java.io.IOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermission;
import java.nio.file.attribute.PosixFilePermissions;
import java.time.Duration;
import java.util.EnumSet;
import java.util.List;
import java.util.Objects;
import java.util.Set;
import java.util.regex.Pattern;

/**
 * How {@link ConsoleServer} serves: where it listens, who may read it, which namespaces it shows, whether it may
 * drain, and how often it asks etcd for what no cache holds. Immutable; {@link #defaults()} or {@link #builder()},
 * checked in {@link Builder#build()} with messages naming the field and the bad value ({@link #toString()} and the
 * messages never show the token).
 *
 * <p>Authentication is always on, loopback too: every {@code /api/*} request needs the token, either as the
 * session cookie the page gets from {@code POST /api/login} (the printed {@link ConsoleServer#loginUrl()} logs in
 * by itself) or as {@code Authorization: Bearer TOKEN} (for programs). The token is {@link #token()}, or a random
 * 32-byte one per start ({@link ConsoleServer#token()}) when none is given. A request whose {@code Host} is not
 * one of the console's own names ({@link #allowedHosts()}) is refused with 421, wildcard bind too: a DNS-rebinding
 * page never reaches the API.
 *
 * @param listen where the HTTP server binds; {@code 127.0.0.1:8080} by default (port 0 picks a free one)
 * @param namespaces the namespaces shown; empty (the default) shows every namespace, as namespaces come and go
 * @param allowDrain whether the service page offers a Drain button and {@code POST /api/drain} is served
 * @param quota the etcd backend quota the DB size is shown against (etcd 3.4 does not report it); 2 GiB by default,
 *     etcd's own default
 * @param directoryRefresh new services, namespaces and services gone are seen at once, by a watch of the registry's
 *     keys ({@link dev.muster.etcd.ServiceDirectory}); this is how often the keys are read again as a check of that
 *     watch; 5 min, at least 1 s
 * @param leaseRefresh the shortest interval between two reads of a viewed service's leases; 2 s
 * @param clusterRefresh the shortest interval between two reads of member status, list and alarms while the cluster
 *     page is viewed; 3 s
 * @param eventCapacity how many events the console keeps (the oldest go first); 500
 * @param maxClients event streams served at once; more get 503; 32
 * @param trustedKeys show only records signed by one of these keys (for their service): an unsigned or forged record
 *     is excluded by the service's cache, counted, and never shown; none (the default): records are not checked
 * @param token the secret every API request must show; {@code null} (the default): a random one per start.
 *     At least 16 characters of {@code A-Z a-z 0-9 . _ ~ + / = -}; {@link Builder#tokenFile(Path)} reads one
 * @param allowedHosts more names the console answers to ({@code NAME}, on the bound port, or {@code NAME:PORT}, as
 *     a browser sends them in {@code Host}), beyond its own: the bound IP, and on loopback {@code localhost},
 *     {@code 127.0.0.1} and {@code [::1]}; on a wildcard bind, loopback's and every local interface's address
 * @param showLeases whether the service page shows each instance's etcd lease id (TTLs are always shown); off by
 *     default: a lease id lets anyone who can write to etcd revoke the instance's registration
 * @param readTimeout how long a request may take to arrive, headers and body (a body sent a byte a second is cut
 *     off); whole seconds, at least 1; 10 s. Enforced by the JDK server's {@code sun.net.httpserver.maxReqTime},
 *     which the first console in a JVM sets when it is unset, and which the JDK reads once per JVM
 */
public record ConsoleConfig(InetSocketAddress listen, List<String> namespaces, boolean allowDrain, long quota,
    Duration directoryRefresh, Duration leaseRefresh, Duration clusterRefresh, int eventCapacity, int maxClients,
    List<TrustedKey> trustedKeys, String token, List<String> allowedHosts, boolean showLeases,
    Duration readTimeout) {
  /** etcd's default backend quota, 2 GiB. */
  public static final long DEFAULT_QUOTA = 2L * 1024 * 1024 * 1024;

  private static final Pattern TOKEN = Pattern.compile("[A-Za-z0-9._~+/=-]{16,512}");
  private static final Pattern HOST = Pattern.compile(
      "(\\[[0-9A-Fa-f:.]+\\]|[A-Za-z0-9]([A-Za-z0-9.-]{0,251}[A-Za-z0-9])?)(:[0-9]{1,5})?");

  public ConsoleConfig {
    Objects.requireNonNull(listen, "listen");
    namespaces = List.copyOf(namespaces);
    trustedKeys = trustedKeys == null ? List.of() : List.copyOf(trustedKeys);
    for (String ns : namespaces) {
      Names.requireValid("namespace", ns);
    }
    requirePositive("quota", quota);
    if (directoryRefresh == null || directoryRefresh.compareTo(Duration.ofSeconds(1)) < 0) {
      throw new dev.muster.InvalidInputException("directoryRefresh", directoryRefresh, "use 1s or more, such as 5m:"
          + " new services are seen at once by the watch; this only paces its check");
    }
    requirePositive("leaseRefresh", leaseRefresh);
    requirePositive("clusterRefresh", clusterRefresh);
    requirePositive("eventCapacity", eventCapacity);
    requirePositive("maxClients", maxClients);
    if (token != null && !TOKEN.matcher(token).matches()) {
      throw InvalidInputException.withMessage("token", "(hidden)", "token (hidden, " + token.length()
          + " characters) is not usable: give at least 16 characters of A-Z a-z 0-9 . _ ~ + / = -, such as the"
          + " output of openssl rand -hex 32");
    }
    allowedHosts = allowedHosts == null ? List.of() : List.copyOf(allowedHosts);
    for (String h : allowedHosts) {
      if (!HOST.matcher(h).matches()) {
        throw new InvalidInputException("allowedHosts", h, "give a host name or IP as a browser sends it in the"
            + " Host header, with or without :PORT, such as console.example.com or console.example.com:8080");
      }
    }
    requirePositive("readTimeout", readTimeout);
    if (readTimeout.toMillis() % 1000 != 0) {
      throw new InvalidInputException("readTimeout", readTimeout, "use whole seconds, such as 10s");
    }
  }

  /** As the record's, with the token hidden. */
  @Override
  public String toString() {
    return "ConsoleConfig[listen=" + listen + ", namespaces=" + namespaces + ", allowDrain=" + allowDrain
        + ", quota=" + quota + ", directoryRefresh=" + directoryRefresh + ", leaseRefresh=" + leaseRefresh
        + ", clusterRefresh=" + clusterRefresh + ", eventCapacity=" + eventCapacity + ", maxClients=" + maxClients
        + ", trustedKeys=" + trustedKeys + ", token=" + (token == null ? "random per start" : "(hidden)")
        + ", allowedHosts=" + allowedHosts + ", showLeases=" + showLeases + ", readTimeout=" + readTimeout + "]";
  }

  public static ConsoleConfig defaults() {
    return builder().build();
  }

  public static Builder builder() {
    return new Builder();
  }

  public Builder toBuilder() {
    Builder b = new Builder();
    b.listen = listen;
    b.namespaces = namespaces;
    b.allowDrain = allowDrain;
    b.quota = quota;
    b.directoryRefresh = directoryRefresh;
    b.leaseRefresh = leaseRefresh;
    b.clusterRefresh = clusterRefresh;
    b.eventCapacity = eventCapacity;
    b.maxClients = maxClients;
    b.trustedKeys = trustedKeys;
    b.token = token;
    b.allowedHosts = allowedHosts;
    b.showLeases = showLeases;
    b.readTimeout = readTimeout;
    return b;
  }

  private static void requirePositive(String field, long value) {
    if (value <= 0) {
      throw new InvalidInputException(field, String.valueOf(value), "must be positive");
    }
  }

  private static void requirePositive(String field, Duration value) {
    Objects.requireNonNull(value, field);
    if (value.isNegative() || value.isZero()) {
      throw new InvalidInputException(field, value.toString(), "must be positive");
    }
  }

  /** Builds a {@link ConsoleConfig}; every setter may be called in any order, {@link #build()} checks them all. */
  public static final class Builder {
    private InetSocketAddress listen = new InetSocketAddress(InetAddress.getLoopbackAddress(), 8080);
    private List<String> namespaces = List.of();
    private boolean allowDrain;
    private long quota = DEFAULT_QUOTA;
    private Duration directoryRefresh = dev.muster.etcd.ServiceDirectory.DEFAULT_RELIST;
    private Duration leaseRefresh = Duration.ofSeconds(2);
    private Duration clusterRefresh = Duration.ofSeconds(3);
    private int eventCapacity = 500;
    private int maxClients = 32;
    private List<TrustedKey> trustedKeys = List.of();
    private String token;
    private List<String> allowedHosts = List.of();
    private boolean showLeases;
    private Duration readTimeout = Duration.ofSeconds(10);

    private Builder() {}

    public Builder listen(InetSocketAddress listen) {
      this.listen = listen;
      return this;
    }

    public Builder namespaces(List<String> namespaces) {
      this.namespaces = namespaces;
      return this;
    }

    public Builder allowDrain(boolean allowDrain) {
      this.allowDrain = allowDrain;
      return this;
    }

    public Builder quota(long bytes) {
      this.quota = bytes;
      return this;
    }

    public Builder directoryRefresh(Duration every) {
      this.directoryRefresh = every;
      return this;
    }

    public Builder leaseRefresh(Duration every) {
      this.leaseRefresh = every;
      return this;
    }

    public Builder clusterRefresh(Duration every) {
      this.clusterRefresh = every;
      return this;
    }

    public Builder eventCapacity(int events) {
      this.eventCapacity = events;
      return this;
    }

    public Builder maxClients(int clients) {
      this.maxClients = clients;
      return this;
    }

    /** Show only records signed by one of {@code keys} (none: not checked). */
    public Builder trustedKeys(List<TrustedKey> keys) {
      this.trustedKeys = keys;
      return this;
    }

    /** The secret API requests must show; {@code null} (the default): a random one per start. */
    public Builder token(String token) {
      this.token = token;
      return this;
    }

    /**
     * The token from the first line of {@code file}, read now. Like a private key, the file must be its owner's
     * alone: on a file system with POSIX permissions, a file its group or others may use is refused.
     *
     * @throws InvalidInputException (field {@code tokenFile}) naming the file: missing, unreadable, open to
     *     others (with the {@code chmod 600} that fixes it), or empty
     */
    public Builder tokenFile(Path file) {
      this.token = readToken(Objects.requireNonNull(file, "file"));
      return this;
    }

    /** More names the console answers to, as browsers send them in {@code Host}: {@code NAME} or {@code NAME:PORT}. */
    public Builder allowedHosts(List<String> hosts) {
      this.allowedHosts = hosts;
      return this;
    }

    /** Show each instance's etcd lease id on the service page (hidden by default). */
    public Builder showLeases(boolean showLeases) {
      this.showLeases = showLeases;
      return this;
    }

    /** How long a request may take to arrive, headers and body; whole seconds; 10 s. */
    public Builder readTimeout(Duration timeout) {
      this.readTimeout = timeout;
      return this;
    }

    public ConsoleConfig build() {
      if (listen == null) {
        throw new InvalidInputException("listen", "null", "give an address such as 127.0.0.1:8080");
      }
      if (listen.isUnresolved()) {
        throw new InvalidInputException("listen", listen.getHostString(), "is not resolved; give an IP address");
      }
      if (namespaces == null) {
        throw new InvalidInputException("namespaces", "null", "give an empty list for every namespace");
      }
      return new ConsoleConfig(listen, namespaces, allowDrain, quota, directoryRefresh, leaseRefresh, clusterRefresh,
          eventCapacity, maxClients, trustedKeys, token, allowedHosts, showLeases, readTimeout);
    }
  }

  private static String readToken(Path file) {
    String text;
    try {
      text = Files.readString(file, StandardCharsets.UTF_8);
    } catch (IOException e) {
      throw new InvalidInputException("tokenFile", file.toString(), "cannot be read (" + e.getClass().getSimpleName()
          + (e.getMessage() == null ? "" : ": " + e.getMessage()) + "): give a readable file holding the token");
    }
    try {
      Set<PosixFilePermission> perms = Files.getPosixFilePermissions(file);
      Set<PosixFilePermission> others = EnumSet.copyOf(perms);
      others.removeAll(EnumSet.of(PosixFilePermission.OWNER_READ, PosixFilePermission.OWNER_WRITE,
          PosixFilePermission.OWNER_EXECUTE));
      if (!others.isEmpty()) {
        throw new InvalidInputException("tokenFile", file.toString(), "the token is open to others ("
            + PosixFilePermissions.toString(perms) + "): make it the owner's alone with chmod 600 " + file);
      }
    } catch (UnsupportedOperationException | IOException e) {
      // no POSIX permissions here: nothing to check
    }
    String line = text.lines().findFirst().orElse("").strip();
    if (line.isEmpty()) {
      throw new InvalidInputException("tokenFile", file.toString(), "is empty: write the token on its first line,"
          + " such as with openssl rand -hex 32 > " + file);
    }
    if (!TOKEN.matcher(line).matches()) {
      throw InvalidInputException.withMessage("tokenFile", file.toString(), "tokenFile " + file + ": its first line"
          + " (" + line.length() + " characters) is not a usable token: give at least 16 characters of"
          + " A-Z a-z 0-9 . _ ~ + / = -, such as the output of openssl rand -hex 32");
    }
    return line;
  }
}
