package dev.muster.bench.etcd;

import dev.muster.bench.support.Plan;
import dev.muster.bench.support.SideResult;
import dev.muster.etcd.EtcdConfig;
import dev.muster.testing.EtcdCluster;
import dev.muster.testing.TempDirs;
import dev.muster.testing.TestPki;
import java.io.PrintStream;
import java.io.UncheckedIOException;
import java.nio.file.Path;
import java.util.List;

/**
 * What TLS costs Muster: register() → visible and close() → gone in one consumer cache, on a plain etcd member and
 * on a member that serves only TLS and requires a client certificate ({@code --client-cert-auth}), both started
 * here side by side and stopped by pid. The samples alternate between the two (plain, TLS, then TLS, plain, ...),
 * so a change in the machine's load during the run falls on both modes alike; connections are made before the
 * first sample, so the handshake is not in the figures: they are the cost of TLS on a live connection.
 *
 * <p>The certificates are throw-away ones made with openssl ({@link TestPki}) under the run's directory and
 * deleted after. A failure is noted in the results and the rest of the bench still runs. Runs on the calling
 * thread.
 */
public final class TlsBench {
  /** The same rows, measured against the plain member and against the TLS one. */
  public record Result(SideResult plain, SideResult tls) {
    public List<String> failures() {
      return plain.failures();
    }
  }

  private static final String SERVICE = "bench-tls";

  private TlsBench() {}

  public static Result run(Plan plan, Path dir, PrintStream progress) {
    Result result = new Result(new SideResult(), new SideResult());
    Path pkiDir = null;
    try {
      pkiDir = TempDirs.create(dir, "tls-pki-");
      TestPki pki = TestPki.create(pkiDir);
      TestPki.Pair client = pki.client("bench");
      try (EtcdCluster plainEtcd = EtcdCluster.builder().members(1).build().start();
          EtcdCluster tlsEtcd = EtcdCluster.builder().members(1).tls(pki).build().start()) {
        progress.println("tls: started a plain member at " + plainEtcd.endpointsString() + " and a TLS one"
            + " (client certificates required) at " + tlsEtcd.endpointsString());
        EtcdConfig plain = EtcdConfig.of(plainEtcd.endpointsString());
        EtcdConfig tls = EtcdConfig.builder().endpoints(tlsEtcd.endpointsString())
            .tls(pki.ca(), client.certificate(), client.key()).build();
        progress.printf("tls: register()→visible / close()→gone in 1 cache, plain and mTLS in turns, %d samples"
            + " each...%n", plan.tlsSamples());
        try (VisibilityRig plainRig = new VisibilityRig(plain, SERVICE, 1, plan);
            VisibilityRig tlsRig = new VisibilityRig(tls, SERVICE, 1, plan)) {
          VisibilityRig.measureInTurns(List.of(plainRig, tlsRig), List.of(result.plain(), result.tls()),
              plan.tlsSamples());
        }
      }
      result.plain().note("plain and TLS members ran side by side (one each), samples alternating between them;"
          + " connections made before the first sample, so no handshake is in the figures");
    } catch (RuntimeException e) { // e.g. openssl missing, a member that did not start
      result.plain().failed("plain vs TLS", e.getMessage());
    } finally {
      if (pkiDir != null) {
        try {
          TempDirs.delete(pkiDir);
        } catch (UncheckedIOException e) {
          result.plain().note("the test certificates in " + pkiDir + " were not removed: " + e.getMessage());
        }
      }
    }
    return result;
  }
}
