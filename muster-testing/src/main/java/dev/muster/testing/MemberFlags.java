package dev.muster.testing;

import java.util.ArrayList;
import java.util.List;

/**
 * The command line of one member of an {@link EtcdCluster}: its name, data directory and URLs, the initial cluster,
 * zap logging to stderr (the member's log file), then the builder's settings (heartbeat, election timeout, auth
 * token TTL, TLS with client certificates), then its extra flags. Stateless.
 */
final class MemberFlags {
  private MemberFlags() {}

  static List<String> of(EtcdCluster.Builder config, EtcdMember m, String initialCluster, String token) {
    List<String> args = new ArrayList<>(List.of(
        "--name", m.name(),
        "--data-dir", m.dataDir().toString(),
        "--listen-client-urls", m.clientUrl().toString(),
        "--advertise-client-urls", m.clientUrl().toString(),
        "--listen-peer-urls", m.peerUrl().toString(),
        "--initial-advertise-peer-urls", m.peerUrl().toString(),
        "--initial-cluster", initialCluster,
        "--initial-cluster-state", "new",
        "--initial-cluster-token", token,
        "--logger", "zap",
        "--log-outputs", "stderr"));
    if (config.heartbeat != null) {
      args.addAll(List.of("--heartbeat-interval", Long.toString(config.heartbeat.toMillis())));
    }
    if (config.electionTimeout != null) {
      args.addAll(List.of("--election-timeout", Long.toString(config.electionTimeout.toMillis())));
    }
    if (config.authTokenTtl != null) {
      args.addAll(List.of("--auth-token-ttl", Long.toString(Math.max(1, config.authTokenTtl.toSeconds()))));
    }
    if (config.pki != null) {
      String ca = config.pki.ca().toString();
      String cert = config.pki.server().certificate().toString();
      String key = config.pki.server().key().toString();
      args.addAll(List.of("--cert-file", cert, "--key-file", key, "--trusted-ca-file", ca, "--client-cert-auth",
          "--peer-cert-file", cert, "--peer-key-file", key, "--peer-trusted-ca-file", ca, "--peer-client-cert-auth"));
    }
    args.addAll(config.extraArgs);
    return args;
  }
}
