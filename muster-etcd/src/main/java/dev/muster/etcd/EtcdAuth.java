package dev.muster.etcd;

import dev.muster.InvalidInputException;
import dev.muster.etcd.internal.EtcdAdmin;
import dev.muster.registry.InstanceKey;
import dev.muster.registry.RegistryLayout;
import java.util.List;
import java.util.Objects;

/**
 * Sets up etcd's users and roles for Muster's key layout, as etcd's {@code root} user: a provider role per service
 * (or per instance, so one provider cannot touch another's record), a consumer role per service or namespace, and
 * an admin role. Every method is idempotent: it reads what exists, applies only what is missing, and returns what
 * it changed (empty when nothing was needed). {@code muster auth} is its command line.
 *
 * <pre>{@code
 * try (EtcdAuth auth = EtcdAuth.connect(EtcdConfig.builder().credentials("root", rootPasswordFile).build())) {
 *   auth.enable();
 *   auth.grantProvider("default", "orders", "orders-svc", null);
 *   auth.grantConsumer("default", "orders", "checkout-svc");
 * }
 * }</pre>
 *
 * <p>Roles are named after what they grant, so running a grant twice finds its role: {@code
 * muster-provider:/muster/default/orders/} (readwrite on the service prefix), {@code
 * muster-provider:/muster/default/orders/v1/i-1} (readwrite on one instance key), {@code
 * muster-consumer:/muster/default/orders/} (read on a service, or on a whole namespace's prefix), and {@code
 * muster-admin:/muster/} (readwrite on everything under the root).
 *
 * <p>What etcd 3.4 cannot enforce: leases carry no owner, so any authenticated user may keep another user's lease
 * alive or learn the keys attached to it (fixed in etcd 3.4.26: CVE-2023-32082); docs/operations/security.md lists
 * these limits.
 *
 * <p>Thread-safe for sequential use; not meant to be shared by concurrent administrators (etcd has no
 * transactions over auth changes, so two concurrent grants of the same role may both create it: one wins).
 */
public final class EtcdAuth implements AutoCloseable {
  /** The prefix of every role Muster creates. */
  public static final String ROLE_PREFIX = "muster-";

  private final EtcdAdmin admin;
  private final RegistryLayout layout;

  /** One change made to etcd's auth configuration, in words such as {@code created role X}. */
  public record Change(String description) {
    @Override
    public String toString() {
      return description;
    }
  }

  /** A user and the roles it holds. */
  public record User(String name, List<String> roles) {}

  /** A role and its permissions, each as {@code read|write|readwrite KEY [prefix]}. */
  public record Role(String name, List<String> permissions) {}

  /** Everything {@link #list()} found: whether auth is on, the users, and the roles (Muster's and others). */
  public record Listing(boolean authEnabled, List<User> users, List<Role> roles) {}

  private EtcdAuth(EtcdAdmin admin, RegistryLayout layout) {
    this.admin = admin;
    this.layout = layout;
  }

  /**
   * Connects as the configuration's user, normally {@code root} (with a password, or a client certificate whose CN
   * is root). Before authentication is enabled etcd lets anyone change users and roles.
   */
  public static EtcdAuth connect(EtcdConfig config) {
    Objects.requireNonNull(config, "config");
    return new EtcdAuth(EtcdAdmin.connect(config), config.layout());
  }

  /**
   * Makes sure user {@code root} exists (created with the configuration's password when missing) and holds role
   * root, then turns authentication on.
   *
   * @throws InvalidInputException when root must be created and the configuration has no password for it
   */
  public List<Change> enable() {
    return changes(admin.enable());
  }

  /**
   * Lets {@code user} register instances of {@code service}: readwrite on the service's prefix, or, with
   * {@code instance} given, on that one instance key only (owner checks: it cannot delete or overwrite the records
   * of other providers of the service).
   *
   * @param instance a version and instance id ({@code namespace} and {@code service} must match), or null
   */
  public List<Change> grantProvider(String namespace, String service, String user, InstanceKey instance) {
    String prefix = layout.servicePrefix(namespace, service);
    requireUser(user);
    if (instance == null) {
      return changes(admin.grant(user, role("provider", prefix), prefix, true, true));
    }
    if (!instance.namespace().equals(namespace) || !instance.service().equals(service)) {
      throw new InvalidInputException("instance", instance.path(), "give an instance of " + namespace + "/" + service);
    }
    String key = layout.instanceKey(instance);
    return changes(admin.grant(user, role("provider", key), key, false, true));
  }

  /**
   * Lets {@code user} watch and list {@code service} (read on its prefix), or with {@code service} null every
   * service of the namespace.
   */
  public List<Change> grantConsumer(String namespace, String service, String user) {
    requireUser(user);
    String prefix = service == null ? layout.namespacePrefix(namespace) : layout.servicePrefix(namespace, service);
    return changes(admin.grant(user, role("consumer", prefix), prefix, true, false));
  }

  /** Lets {@code user} read and write everything under the layout's root (operators, {@code muster doctor}). */
  public List<Change> grantAdmin(String user) {
    requireUser(user);
    String prefix = layout.rootPrefix();
    return changes(admin.grant(user, role("admin", prefix), prefix, true, true));
  }

  /**
   * Creates {@code user} with {@code password} if it does not exist (a user that logs in with a client certificate
   * still needs one in etcd 3.4; any long random password will do).
   */
  public List<Change> addUser(String user, String password) {
    return changes(admin.addUser(requireUser(user), Objects.requireNonNull(password, "password")));
  }

  /** The users and roles as etcd holds them now. */
  public Listing list() {
    EtcdAdmin.Listing l = admin.list();
    return new Listing(l.authEnabled(),
        l.users().entrySet().stream().map(e -> new User(e.getKey(), List.copyOf(e.getValue()))).toList(),
        l.roles().entrySet().stream().map(e -> new Role(e.getKey(), List.copyOf(e.getValue()))).toList());
  }

  private static List<Change> changes(List<String> done) {
    return done.stream().map(Change::new).toList();
  }

  @Override
  public void close() {
    admin.close();
  }

  private static String role(String kind, String keyOrPrefix) {
    return ROLE_PREFIX + kind + ":" + keyOrPrefix;
  }

  static String requireUser(String user) {
    if (user == null || user.isBlank() || user.chars().anyMatch(Character::isWhitespace)) {
      throw new InvalidInputException("user", user == null ? "" : user, "give an etcd user name without spaces");
    }
    return user;
  }
}
