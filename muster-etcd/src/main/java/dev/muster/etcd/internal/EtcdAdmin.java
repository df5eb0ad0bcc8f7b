package dev.muster.etcd.internal;

import dev.muster.InvalidInputException;
import dev.muster.RegistryUnavailableException;
import dev.muster.etcd.EtcdConfig;
import io.etcd.jetcd.Auth;
import io.etcd.jetcd.ByteSequence;
import io.etcd.jetcd.auth.Permission;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;

/**
 * {@code EtcdAuth}'s etcd calls: read what exists, apply what is missing, report each change in words. Every call
 * blocks for at most the request timeout, or {@link #MIN_TIMEOUT} if that is longer; a refusal becomes an
 * {@link dev.muster.AccessDeniedException} naming the user.
 *
 * <p>Not thread-safe; one administrator at a time.
 */
public final class EtcdAdmin implements AutoCloseable {
  /**
   * The least time an admin call gets. Each one may include a login, which costs etcd a bcrypt check of the
   * password (cost 10 by default, tens of milliseconds on an idle machine, seconds on a loaded one): a fresh-clone
   * test run on a busy 2-core machine saw the 2 s request timeout expire on the first login. Admin commands are
   * not latency-sensitive.
   */
  static final java.time.Duration MIN_TIMEOUT = java.time.Duration.ofSeconds(10);

  /** What {@link #list()} found: users with their roles, roles with their permissions in words, in etcd's order. */
  public record Listing(boolean authEnabled, java.util.Map<String, List<String>> users,
      java.util.Map<String, List<String>> roles) {}

  private final EtcdConfig config;
  private final java.time.Duration timeout;
  private EtcdConnection connection;

  private EtcdAdmin(EtcdConfig config) {
    this.config = config;
    this.timeout = config.requestTimeout().compareTo(MIN_TIMEOUT) > 0 ? config.requestTimeout() : MIN_TIMEOUT;
  }

  public static EtcdAdmin connect(EtcdConfig config) {
    EtcdAdmin admin = new EtcdAdmin(config);
    admin.connection = new EtcdConnection(config);
    return admin;
  }

  /** Root exists with role root, then auth enable; see {@code EtcdAuth.enable()}. */
  public List<String> enable() {
    List<String> changes = new ArrayList<>();
    if (authEnabled()) {
      return changes;
    }
    // Auth is off: etcd refuses every token, so talk to it without credentials (TLS settings stay).
    try (EtcdConnection open = new EtcdConnection(config.toBuilder().noCredentials().build())) {
      Auth auth = open.client().getAuthClient();
      if (!users(auth).contains("root")) {
        if (config.credentials() == null || !"root".equals(config.credentials().user())) {
          throw new InvalidInputException("user", config.credentials() == null ? "" : config.credentials().user(),
              "etcd has no user root yet: connect as user root with the password to give it");
        }
        call("create user root", auth.userAdd(bytes("root"), bytes(config.credentials().password())));
        changes.add("created user root");
      }
      changes.addAll(grantRole(auth, "root", "root"));
      call("enable authentication", auth.authEnable());
      changes.add("enabled authentication");
    }
    return changes;
  }

  /** Creates {@code user} unless it exists. */
  public List<String> addUser(String user, String password) {
    Auth auth = auth();
    if (users(auth).contains(user)) {
      return List.of();
    }
    call("create user " + user, auth.userAdd(bytes(user), bytes(password)));
    return List.of("created user " + user);
  }

  /** {@code role} with one permission on {@code key} (a prefix when {@code prefix}), granted to {@code user}. */
  public List<String> grant(String user, String role, String key, boolean prefix, boolean write) {
    Auth auth = auth();
    if (!users(auth).contains(user)) {
      throw new InvalidInputException("user", user, "etcd has no such user: create it first (EtcdAuth.addUser)");
    }
    List<String> changes = new ArrayList<>();
    List<String> roles = call("list roles", auth.roleList()).getRoles();
    if (!roles.contains(role)) {
      call("create role " + role, auth.roleAdd(bytes(role)));
      changes.add("created role " + role);
    }
    Permission.Type type = write ? Permission.Type.READWRITE : Permission.Type.READ;
    ByteSequence end = prefix ? EtcdCacheIo.prefixEnd(key) : ByteSequence.EMPTY;
    boolean held = call("read role " + role, auth.roleGet(bytes(role))).getPermissions().stream()
        .anyMatch(p -> p.getKey().equals(bytes(key)) && p.getRangeEnd().equals(end) && p.getPermType() == type);
    if (!held) {
      call("grant " + type + " on " + key + " to role " + role,
          auth.roleGrantPermission(bytes(role), bytes(key), end, type));
      changes.add("granted " + describe(type) + " on " + key + (prefix ? " (prefix)" : "") + " to role "
          + role);
    }
    changes.addAll(grantRole(auth, user, role));
    return changes;
  }

  public Listing list() {
    boolean enabled = authEnabled();
    Auth auth = auth();
    java.util.Map<String, List<String>> users = new java.util.LinkedHashMap<>();
    for (String user : users(auth)) {
      users.put(user, call("read user " + user, auth.userGet(bytes(user))).getRoles());
    }
    java.util.Map<String, List<String>> roles = new java.util.LinkedHashMap<>();
    for (String role : call("list roles", auth.roleList()).getRoles()) {
      List<String> permissions = new ArrayList<>();
      for (Permission p : call("read role " + role, auth.roleGet(bytes(role))).getPermissions()) {
        String key = p.getKey().toString(StandardCharsets.UTF_8);
        boolean isPrefix = p.getRangeEnd().equals(EtcdCacheIo.prefixEnd(key));
        permissions.add(describe(p.getPermType()) + " " + key + (isPrefix ? " (prefix)"
            : p.getRangeEnd().isEmpty() ? "" : " to " + p.getRangeEnd().toString(StandardCharsets.UTF_8)));
      }
      roles.put(role, permissions);
    }
    return new Listing(enabled, users, roles);
  }

  @Override
  public void close() {
    connection.close();
  }

  /**
   * Whether authentication is on, asked with a token request for a user that cannot log in: etcd answers "auth not
   * enabled" (FAILED_PRECONDITION) when it is off, "authentication failed" when it is on.
   */
  private boolean authEnabled() {
    EtcdConfig probe = config.toBuilder().credentials("root", "muster-probe-" + UUID.randomUUID()).build();
    try (EtcdConnection c = new EtcdConnection(probe)) {
      EtcdOps.getPrefix(c.client(), config.layout().rootPrefix() + "-", timeout);
      return false; // etcd 3.4 never accepts that password; answered anyway: treat auth as off
    } catch (EtcdOps.EtcdCallException e) {
      if (EtcdErrors.authNotEnabled(e.getCause())) {
        return false;
      }
      if (e.kind() == EtcdErrors.Kind.UNAUTHENTICATED) {
        return true;
      }
      throw unavailable("ask whether authentication is enabled", e);
    }
  }

  private List<String> grantRole(Auth auth, String user, String role) {
    if (call("read user " + user, auth.userGet(bytes(user))).getRoles().contains(role)) {
      return List.of();
    }
    call("grant role " + role + " to user " + user, auth.userGrantRole(bytes(user), bytes(role)));
    return List.of("granted role " + role + " to user " + user);
  }

  private List<String> users(Auth auth) {
    return call("list users", auth.userList()).getUsers();
  }

  private Auth auth() {
    return connection.client().getAuthClient();
  }

  private <T> T call(String what, CompletableFuture<T> future) {
    try {
      return EtcdOps.await(what, future, timeout);
    } catch (EtcdOps.EtcdCallException e) {
      if (e.kind() == EtcdErrors.Kind.DENIED || e.kind() == EtcdErrors.Kind.UNAUTHENTICATED) {
        throw EtcdErrors.accessDenied(config, e.kind(), what, "role root (only root may change users and roles)",
            e.getCause());
      }
      throw unavailable(what, e);
    }
  }

  private RuntimeException unavailable(String what, EtcdOps.EtcdCallException e) {
    if (e.kind() == EtcdErrors.Kind.UNAVAILABLE) {
      return new RegistryUnavailableException("etcd at " + config.endpoints() + " did not answer (" + e.getMessage()
          + "): check that etcd runs there and that EtcdConfig's endpoints name it", e);
    }
    return new dev.muster.MusterException(dev.muster.ErrorCode.INTERNAL, "etcd refused to " + what + ": "
        + e.getMessage(), e);
  }

  private static String describe(Permission.Type type) {
    return switch (type) {
      case READ -> "read";
      case WRITE -> "write";
      case READWRITE -> "readwrite";
      default -> type.name().toLowerCase(java.util.Locale.ROOT);
    };
  }

  private static ByteSequence bytes(String s) {
    return ByteSequence.from(s, StandardCharsets.UTF_8);
  }
}
