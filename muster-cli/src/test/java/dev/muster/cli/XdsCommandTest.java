package dev.muster.cli;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.PrintWriter;
import java.io.StringWriter;
import org.junit.jupiter.api.Test;

/** {@code muster xds} and {@code muster xds bootstrap} as parsed, before anything connects. */
class XdsCommandTest {
  private record Run(int exit, String out, String err) {}

  private static Run run(String... args) {
    StringWriter out = new StringWriter();
    StringWriter err = new StringWriter();
    int exit = Main.run(args, new PrintWriter(out, true), new PrintWriter(err, true));
    return new Run(exit, out.toString(), err.toString());
  }

  @Test
  void bootstrapPrintsWhatAGrpcClientReads() throws Exception {
    Run r = run("xds", "bootstrap", "--server", "127.0.0.1:18000", "--node-id", "orders-1", "--zone", "z1");

    assertThat(r.exit()).isZero();
    JsonNode b = new ObjectMapper().readTree(r.out());
    assertThat(b.path("xds_servers").get(0).path("server_uri").asText()).isEqualTo("127.0.0.1:18000");
    assertThat(b.path("xds_servers").get(0).path("channel_creds").get(0).path("type").asText()).isEqualTo("insecure");
    assertThat(b.path("node").path("id").asText()).isEqualTo("orders-1");
    assertThat(b.path("node").path("locality").path("zone").asText()).isEqualTo("z1");
  }

  @Test
  void aBootstrapWithoutANodeIdGetsARandomOneAndAnEmptyLocality() throws Exception {
    JsonNode b = new ObjectMapper().readTree(run("xds", "bootstrap", "--server", "localhost:18000").out());

    assertThat(b.path("node").path("id").asText()).startsWith("muster-");
    assertThat(b.path("node").path("locality").isObject()).as("Node's client needs a locality").isTrue();
  }

  @Test
  void badInputIsOneLineNamingTheFlagAndExits2() {
    Run server = run("xds", "bootstrap", "--server", "no-port");
    Run zone = run("xds", "bootstrap", "--server", "127.0.0.1:18000", "--zone", "bad zone");
    Run pct = run("xds", "--failure-percentage", "101", "--endpoints", "http://127.0.0.1:1");

    assertThat(server.exit()).isEqualTo(2);
    assertThat(server.err().strip()).startsWith("muster: --server").doesNotContain("\n");
    assertThat(zone.exit()).isEqualTo(2);
    assertThat(zone.err().strip()).contains("--zone");
    assertThat(pct.exit()).isEqualTo(2);
    assertThat(pct.err().strip()).contains("--failure-percentage").doesNotContain("\n");
  }

  @Test
  void zonePrioritiesAndOutlierDetectionAreOnUnlessTurnedOff() {
    XdsCommand on = new XdsCommand();
    new picocli.CommandLine(on).parseArgs();
    XdsCommand off = new XdsCommand();
    new picocli.CommandLine(off).parseArgs("--no-zone-priorities", "--no-outlier-detection");

    assertThat(on.zonePriorities).isTrue();
    assertThat(on.outlierDetection).isTrue();
    assertThat(off.zonePriorities).isFalse();
    assertThat(off.outlierDetection).isFalse();
  }

  @Test
  void grpcCallThroughAnXdsServerRefusesThePolicyOptionsTheServerDecides() {
    Run policy = run("grpc-call", "echo", "--xds-server", "127.0.0.1:18000", "--policy", "round_robin");
    Run zone = run("grpc-call", "echo", "--xds-zone", "z1");
    Run server = run("grpc-call", "echo", "--xds-server", "nowhere");

    assertThat(policy.exit()).isEqualTo(2);
    assertThat(policy.err().strip()).startsWith("muster: --xds-server").doesNotContain("\n");
    assertThat(zone.exit()).isEqualTo(2);
    assertThat(zone.err().strip()).contains("--xds-zone").contains("--xds-server");
    assertThat(server.exit()).isEqualTo(2);
    assertThat(server.err().strip()).contains("HOST:PORT");
  }
}
