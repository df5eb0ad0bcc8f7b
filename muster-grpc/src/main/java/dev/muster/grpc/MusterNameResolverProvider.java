package dev.muster.grpc;

import dev.muster.InvalidInputException;
import dev.muster.etcd.EtcdConfig;
import dev.muster.etcd.EtcdRegistry;
import dev.muster.sign.TrustedKey;
import io.grpc.NameResolver;
import io.grpc.NameResolverProvider;
import java.net.InetSocketAddress;
import java.net.SocketAddress;
import java.net.URI;
import java.nio.file.Path;
import java.util.Collection;
import java.util.List;
import java.util.Objects;
import java.util.concurrent.atomic.LongAdder;
import java.util.function.UnaryOperator;

/**
 * Resolves {@code muster:///SERVICE?namespace=NS&version=V&zone=Z} targets from the Muster registry in etcd, and
 * proposes the {@code muster} load-balancing policy in each result's service config.
 *
 * <p>Two ways in. The service loader finds the no-argument provider (listed in
 * {@code META-INF/services/io.grpc.NameResolverProvider}), so {@code ManagedChannelBuilder.forTarget("muster:///echo")}
 * just works; it connects to etcd on first use with the command line's settings, read from the environment:
 * {@code MUSTER_ENDPOINTS} (default {@value EtcdConfig#DEFAULT_ENDPOINT}), {@code MUSTER_CACERT}, {@code MUSTER_CERT},
 * {@code MUSTER_KEY}, {@code MUSTER_AUTHORITY}, {@code MUSTER_USER} with {@code MUSTER_PASSWORD_FILE}, and
 * {@code MUSTER_TRUST_KEYS} (comma-separated Ed25519 public key files, as {@code --trust-key}: only records signed by
 * one of them are resolved; a forged or unsigned record never reaches a channel). That
 * connection is shared by its channels and closed when the last of their resolvers shuts down. Code that holds an
 * {@link EtcdRegistry} uses {@link #of(EtcdRegistry)} instead (register it in a {@code NameResolverRegistry}, or
 * pass it to {@code ManagedChannelBuilder.nameResolverFactory}); that registry stays the caller's to close.
 *
 * <p>Thread-safe.
 */
public final class MusterNameResolverProvider extends NameResolverProvider {
  /** The target scheme. */
  public static final String SCHEME = "muster";

  private final Registries registries;
  private final int priority;
  private final LongAdder staleResults = new LongAdder();

  /** The service loader's provider: etcd from the environment, connected lazily (see the class comment). */
  public MusterNameResolverProvider() {
    this(new FromEnvironment(System::getenv), 5);
  }

  private MusterNameResolverProvider(Registries registries, int priority) {
    this.registries = registries;
    this.priority = priority;
  }

  /**
   * A provider resolving from {@code registry}, which stays the caller's: closing it ends these resolvers' watches.
   * Its priority (6) is above the service loader's provider (5), so registering it in the default
   * {@code NameResolverRegistry} makes it the one used for {@code muster:} targets.
   */
  public static MusterNameResolverProvider of(EtcdRegistry registry) {
    return of(registry, List.of());
  }

  /**
   * As {@link #of(EtcdRegistry)}, resolving only records signed by one of {@code trusted} (for each target's
   * namespace and service): a record that is unsigned, forged or signed by another key is excluded by the cache and
   * counted in its {@code unverifiedCount()}, as with {@code muster call --trust-key}.
   */
  public static MusterNameResolverProvider of(EtcdRegistry registry, List<TrustedKey> trusted) {
    Objects.requireNonNull(registry, "registry");
    List<TrustedKey> keys = List.copyOf(trusted);
    return new MusterNameResolverProvider(() -> new RegistryLease(registry, keys, () -> { }), 6);
  }

  /** The keys {@code MUSTER_TRUST_KEYS} names (comma-separated files), none when unset; throws for a bad file. */
  public static List<TrustedKey> trustedKeysFromEnvironment(UnaryOperator<String> env) {
    String files = blankToNull(env.apply("MUSTER_TRUST_KEYS"));
    if (files == null) {
      return List.of();
    }
    List<TrustedKey> keys = new java.util.ArrayList<>();
    for (String f : files.split(",")) {
      if (!f.isBlank()) {
        keys.add(TrustedKey.read(Path.of(f.trim())));
      }
    }
    return List.copyOf(keys);
  }

  /**
   * The etcd configuration the no-argument provider builds from {@code env} (a variable's value or null): the same
   * names and rules as the command line. Throws {@link InvalidInputException} for a malformed value, or a user
   * without a password file (or the reverse).
   */
  public static EtcdConfig etcdConfigFromEnvironment(UnaryOperator<String> env) {
    String endpoints = blankToNull(env.apply("MUSTER_ENDPOINTS"));
    EtcdConfig.Builder b = EtcdConfig.builder().endpoints(endpoints == null ? EtcdConfig.DEFAULT_ENDPOINT : endpoints);
    Path ca = path(env.apply("MUSTER_CACERT"));
    Path cert = path(env.apply("MUSTER_CERT"));
    Path key = path(env.apply("MUSTER_KEY"));
    if (ca != null || cert != null || key != null) {
      b.tls(ca, cert, key);
    }
    String authority = blankToNull(env.apply("MUSTER_AUTHORITY"));
    if (authority != null) {
      b.authority(authority);
    }
    String user = blankToNull(env.apply("MUSTER_USER"));
    Path passwordFile = path(env.apply("MUSTER_PASSWORD_FILE"));
    if (user != null && passwordFile == null) {
      throw new InvalidInputException("MUSTER_PASSWORD_FILE", null, "set it to a file holding MUSTER_USER " + user
          + "'s password");
    }
    if (user == null && passwordFile != null) {
      throw new InvalidInputException("MUSTER_USER", null, "set it to the user whose password is in "
          + passwordFile);
    }
    if (user != null) {
      b.credentials(user, passwordFile);
    }
    return b.build();
  }

  /**
   * How many resolution results were delivered stale (etcd unreachable, the last good set re-sent), over every
   * resolver of this provider.
   */
  public long staleResults() {
    return staleResults.sum();
  }

  @Override
  public String getDefaultScheme() {
    return SCHEME;
  }

  @Override
  protected boolean isAvailable() {
    return true;
  }

  @Override
  protected int priority() {
    return priority;
  }

  @Override
  public Collection<Class<? extends SocketAddress>> getProducedSocketAddressTypes() {
    return List.of(InetSocketAddress.class);
  }

  /** Null for another scheme (the channel asks the next provider); throws for a malformed {@code muster:} target. */
  @Override
  public NameResolver newNameResolver(URI targetUri, NameResolver.Args args) {
    if (!SCHEME.equals(targetUri.getScheme())) {
      return null;
    }
    MusterTarget target;
    try {
      target = MusterTarget.parse(targetUri);
    } catch (InvalidInputException e) {
      throw new IllegalArgumentException(e.getMessage(), e);
    }
    return new MusterNameResolver(target, registries.acquire(), args, staleResults);
  }

  private static Path path(String value) {
    String s = blankToNull(value);
    return s == null ? null : Path.of(s);
  }

  private static String blankToNull(String s) {
    return s == null || s.isBlank() ? null : s.trim();
  }

  /** A resolver's hold on a registry; {@link #release()} once, when the resolver shuts down. */
  static final class RegistryLease {
    private final EtcdRegistry registry;
    private final List<TrustedKey> trusted;
    private final Runnable onRelease;

    RegistryLease(EtcdRegistry registry, List<TrustedKey> trusted, Runnable onRelease) {
      this.registry = registry;
      this.trusted = trusted;
      this.onRelease = onRelease;
    }

    EtcdRegistry registry() {
      return registry;
    }

    /** The keys a target's records must be signed by (none: not checked). */
    List<TrustedKey> trusted() {
      return trusted;
    }

    void release() {
      onRelease.run();
    }
  }

  private interface Registries {
    RegistryLease acquire();
  }

  /** One registry from the environment, connected on first use, closed when its last resolver lets go. */
  private static final class FromEnvironment implements Registries {
    private final UnaryOperator<String> env;
    private EtcdRegistry registry; // guarded by this
    private List<TrustedKey> trusted; // guarded by this
    private int holders; // guarded by this

    FromEnvironment(UnaryOperator<String> env) {
      this.env = env;
    }

    @Override
    public synchronized RegistryLease acquire() {
      if (registry == null) {
        trusted = trustedKeysFromEnvironment(env); // a bad key file fails here, before connecting
        registry = EtcdRegistry.connect(etcdConfigFromEnvironment(env)); // returns at once; connects on first use
      }
      holders++;
      EtcdRegistry held = registry;
      return new RegistryLease(held, trusted, () -> release(held));
    }

    private void release(EtcdRegistry held) {
      EtcdRegistry toClose = null;
      synchronized (this) {
        if (registry == held && --holders == 0) {
          toClose = registry;
          registry = null;
        }
      }
      if (toClose != null) {
        toClose.close(); // outside the lock: closing waits for the caches' threads
      }
    }
  }
}
