package dev.muster.cli;

import dev.muster.testing.EtcdCluster;
import dev.muster.testing.TestPki;
import java.io.PrintWriter;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.regex.Pattern;

/**
 * What {@code muster etcd} prints so that a user can reach the registry it started: the flags on one line
 * ({@code --endpoints URLS}, with {@code --tls} the CA and root's client certificate, with {@code --auth}
 * {@code --user root --password-file FILE}), the same as {@code export MUSTER_...=} lines, and with auth a hint at
 * the next steps. The flag names are {@link CommonOptions}' and the variables the ones it reads.
 *
 * <p>Immutable.
 */
final class EtcdAccess {
  private static final Pattern SHELL_SAFE = Pattern.compile("[A-Za-z0-9_./:,=@+-]+");

  /** One thing a client needs: its flag, the environment variable that stands for the flag, and the value. */
  private record Setting(String flag, String variable, String value) {}

  private final List<String> notes;
  private final List<Setting> settings;
  private final List<String> next;

  private EtcdAccess(List<String> notes, List<Setting> settings, List<String> next) {
    this.notes = List.copyOf(notes);
    this.settings = List.copyOf(settings);
    this.next = List.copyOf(next);
  }

  /**
   * The access to {@code cluster}: {@code pki} is its certificates (null without TLS), {@code temporary} whether
   * they are removed on exit, {@code clientCerts} the extra users to make client certificates for.
   */
  static EtcdAccess of(EtcdCluster cluster, TestPki pki, boolean temporary, List<String> clientCerts) {
    List<String> notes = new ArrayList<>();
    List<Setting> settings = new ArrayList<>();
    List<String> next = new ArrayList<>();
    settings.add(new Setting("--endpoints", CommonOptions.ENDPOINTS_ENV, cluster.endpointsString()));
    if (pki != null) {
      TestPki.Pair root = pki.client("root");
      settings.add(new Setting("--cacert", "MUSTER_CACERT", pki.ca().toString()));
      settings.add(new Setting("--cert", "MUSTER_CERT", root.certificate().toString()));
      settings.add(new Setting("--key", "MUSTER_KEY", root.key().toString()));
      notes.add("TLS: certificates in " + pki.ca().getParent() + (temporary ? " (removed on exit)" : " (made afresh on"
          + " every start)") + "; members require a client certificate signed by ca.pem, and under etcd"
          + " authentication its CN is the etcd user (client-root.pem: root)");
      for (String user : clientCerts) {
        TestPki.Pair pair = pki.client(user);
        notes.add("client certificate for etcd user " + user + ": --cert " + shell(pair.certificate()) + " --key "
            + shell(pair.key()));
      }
    }
    if (cluster.authEnabled()) {
      settings.add(new Setting("--user", "MUSTER_USER", "root"));
      settings.add(new Setting("--password-file", "MUSTER_PASSWORD_FILE", cluster.rootPasswordFile().toString()));
      notes.add("auth: etcd authentication is on; user root's password is the first line of "
          + shell(cluster.rootPasswordFile()));
      next.add("Next, as root (the flags above, or the lines above exported), give each service its own users:");
      next.add("  muster auth add-user USER --new-password-file FILE");
      next.add("  muster auth grant-provider SERVICE USER     (USER may register SERVICE)");
      next.add("  muster auth grant-consumer SERVICE USER     (USER may watch, ls and call SERVICE)");
      next.add("  muster auth ls                              (what is granted)");
      if (pki != null) {
        next.add("A user that logs in by certificate needs one (--client-cert USER) and still an etcd user (add-user,"
            + " any long password); a user with --user and --password-file may present any client certificate.");
      }
    }
    return new EtcdAccess(notes, settings, next);
  }

  /** The notes, the flags on one line, the export lines, and with auth the next steps. */
  void print(PrintWriter out) {
    notes.forEach(out::println);
    out.println(String.join(" ", settings.stream().map(s -> s.flag() + " " + shell(s.value())).toList()));
    settings.forEach(s -> out.println("export " + s.variable() + "=" + shell(s.value())));
    next.forEach(out::println);
  }

  private static String shell(Path p) {
    return shell(p.toString());
  }

  /** The value as one shell word: as is when it holds nothing a shell would split or expand, else single-quoted. */
  static String shell(String value) {
    return SHELL_SAFE.matcher(value).matches() ? value : "'" + value.replace("'", "'\\''") + "'";
  }
}
