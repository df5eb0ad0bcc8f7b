package dev.muster.cli;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.json.JsonMapper;
import dev.muster.InvalidInputException;
import dev.muster.registry.Instance;
import dev.muster.registry.RegistrationEvent;
import dev.muster.testing.JsonLog;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * {@code muster register} and {@code muster ls} in process: every bad input exits 2 with one stderr line naming
 * the field, before etcd is contacted (nothing listens on the endpoint used here).
 */
class RegisterCommandTest {
  private static final String NOWHERE = "http://127.0.0.1:1";

  private final StringWriter out = new StringWriter();
  private final StringWriter err = new StringWriter();

  private int register(String... extra) {
    List<String> args = new java.util.ArrayList<>(List.of("register", "--endpoints", NOWHERE));
    args.addAll(List.of(extra));
    return Main.run(args.toArray(String[]::new), new PrintWriter(out, true), new PrintWriter(err, true));
  }

  private String oneErrorLine() {
    String text = err.toString().strip();
    assertThat(text).doesNotContain("\n").startsWith("muster: ");
    return text;
  }

  @Test
  void anUppercaseServiceNameExitsTwoNamingTheService() {
    assertThat(register("--service", "Orders_API", "--address", "10.0.0.7:8080")).isEqualTo(2);
    assertThat(oneErrorLine()).contains("service \"Orders_API\" is invalid");
  }

  @Test
  void portZeroExitsTwoNamingThePort() {
    assertThat(register("--service", "orders", "--address", "10.0.0.7:0")).isEqualTo(2);
    assertThat(oneErrorLine()).contains("port 0 is invalid").contains("1-65535");
  }

  @Test
  void aPortAboveTheRangeExitsTwoNamingThePort() {
    assertThat(register("--service", "orders", "--address", "10.0.0.7:70000")).isEqualTo(2);
    assertThat(oneErrorLine()).contains("port 70000 is invalid");
  }

  @Test
  void anAddressWithASchemeExitsTwoNamingTheAddress() {
    assertThat(register("--service", "orders", "--address", "http://x:80")).isEqualTo(2);
    assertThat(oneErrorLine()).contains("address \"http://x\" is invalid").contains("remove the scheme");
  }

  @Test
  void anAddressWithoutAPortExitsTwoNamingTheFlag() {
    assertThat(register("--service", "orders", "--address", "10.0.0.7")).isEqualTo(2);
    assertThat(oneErrorLine()).contains("--address \"10.0.0.7\" is invalid").contains("HOST:PORT");
  }

  @Test
  void aPortThatIsNotANumberExitsTwoNamingTheFlag() {
    assertThat(register("--service", "orders", "--address", "10.0.0.7:http")).isEqualTo(2);
    assertThat(oneErrorLine()).contains("--address").contains("not a number");
  }

  @Test
  void anIpv6AddressWithoutBracketsIsRefusedBecauseItsPortIsAmbiguous() {
    assertThat(register("--service", "orders", "--address", "fd00::7:8080")).isEqualTo(2);
    assertThat(oneErrorLine()).contains("--address").contains("brackets");
  }

  @Test
  void aMetadataKeyGivenTwiceExitsTwoNamingTheFlagAndTheKey() {
    assertThat(register("--service", "orders", "--address", "10.0.0.7:8080", "--meta", "a=1", "--meta", "a=2"))
        .isEqualTo(2);
    assertThat(oneErrorLine()).contains("--meta").contains("\"a\"").contains("twice");
  }

  @Test
  void metadataWithoutAnEqualsSignExitsTwo() {
    assertThat(register("--service", "orders", "--address", "10.0.0.7:8080", "--meta", "team")).isEqualTo(2);
    assertThat(oneErrorLine()).contains("--meta \"team\" is invalid").contains("KEY=VALUE");
  }

  @Test
  void aTtlBelowTwoSecondsExitsTwoNamingTheTtl() {
    assertThat(register("--service", "orders", "--address", "10.0.0.7:8080", "--ttl", "1s")).isEqualTo(2);
    assertThat(oneErrorLine()).contains("ttl \"1s\" is invalid").contains("at least 2s");
  }

  @Test
  void aKeepaliveNotBelowTheTtlExitsTwo() {
    assertThat(register("--service", "orders", "--address", "10.0.0.7:8080", "--ttl", "3s", "--keepalive", "3s"))
        .isEqualTo(2);
    assertThat(oneErrorLine()).contains("keepalive \"3s\" is invalid");
  }

  @Test
  void aMissingServiceIsBadUsage() {
    assertThat(register("--address", "10.0.0.7:8080")).isEqualTo(2);
    assertThat(oneErrorLine()).contains("--service").contains("muster register --help");
  }

  @Test
  void aMalformedEndpointExitsTwoNamingTheEndpoints() {
    int code = Main.run(new String[] {"ls", "--endpoints", "127.0.0.1:2379"}, new PrintWriter(out, true),
        new PrintWriter(err, true));
    assertThat(code).isEqualTo(2);
    assertThat(oneErrorLine()).contains("endpoints").contains("http://HOST:PORT");
  }

  @Test
  void helpOfRegisterShowsTheCommonOptionsAndTheServiceVersion() {
    assertThat(Main.run(new String[] {"register", "--help"}, new PrintWriter(out, true), new PrintWriter(err, true)))
        .isZero();
    assertThat(out.toString()).contains("--endpoints").contains("--namespace").contains("--version")
        .contains("MUSTER_ENDPOINTS");
  }

  @Test
  void bracketedIpv6AddressesLoseTheirBracketsAndSplitOnTheLastColon() {
    assertThat(HostPort.parse("[::1]:8080")).isEqualTo(new HostPort("::1", 8080));
    assertThat(HostPort.parse("orders.internal:80")).isEqualTo(new HostPort("orders.internal", 80));
    assertThatThrownBy(() -> HostPort.parse("10.0.0.7:")).isInstanceOf(InvalidInputException.class)
        .hasMessageContaining("--address");
  }

  @Test
  void theFlagBeatsTheEnvironmentWhichBeatsTheDefaultEndpoint() {
    assertThat(CommonOptions.endpoints("http://a:1", "http://b:2")).isEqualTo("http://a:1");
    assertThat(CommonOptions.endpoints(null, "http://b:2")).isEqualTo("http://b:2");
    assertThat(CommonOptions.endpoints(null, " ")).isEqualTo("http://127.0.0.1:2379");
    assertThat(CommonOptions.endpoints(null, null)).isEqualTo("http://127.0.0.1:2379");
  }

  @Test
  void metadataEntriesKeepEverythingAfterTheFirstEqualsSign() {
    assertThat(InstanceOptions.metadata(List.of("url=http://x/?a=b", "empty="))).isEqualTo(
        Map.of("url", "http://x/?a=b", "empty", ""));
  }

  @Test
  void eventLinesCarryMicrosecondUtcTimestampsAndTheLeaseInHex() throws Exception {
    Instant ts = Instant.parse("2026-11-29T21:30:01.123456789Z");
    RegistrationEvent event = new RegistrationEvent(RegistrationEvent.Type.REGISTERED, ts, "a-1", 123, 42, "");
    StringWriter line = new StringWriter();
    JsonLines.print(new PrintWriter(line), EventLines.of(event, Instance.of("orders", "10.0.0.7", 8080)));
    JsonNode json = JsonMapper.builder().build().readTree(line.toString());
    assertThat(line.toString()).endsWith(System.lineSeparator()).hasLineCount(1);
    assertThat(json.get("event").asText()).isEqualTo("registered");
    assertThat(json.get("ts").asText()).isEqualTo("2026-11-29T21:30:01.123456Z");
    assertThat(json.get("lease").asLong()).isEqualTo(123);
    assertThat(json.get("lease_hex").asText()).isEqualTo("7b");
    assertThat(json.get("revision").asLong()).isEqualTo(42);
    assertThat(JsonLines.ts(Instant.parse("2026-01-01T00:00:00Z"))).isEqualTo("2026-01-01T00:00:00.000000Z");
    assertThat(json.has("ttl_s")).as("an event that knows no TTL prints none").isFalse();
    assertThat(json.has("answered_us")).as("only a keepalive prints its answer time").isFalse();
  }

  @Test
  void anEventThatKnowsTheLeasesTtlPrintsItAsAField() throws Exception {
    RegistrationEvent event = new RegistrationEvent(RegistrationEvent.Type.KEEPALIVE, Instant.EPOCH, "a-1", 123, 0,
        "ttl 5s", java.time.Duration.ofSeconds(5));
    JsonNode json = JsonMapper.builder().build().readTree(JsonLog.line(EventLines.of(event,
        Instance.of("orders", "10.0.0.7", 8080), java.time.Duration.ofNanos(1_234_567))));
    assertThat(json.get("ttl_s").asLong()).isEqualTo(5);
    assertThat(json.get("answered_us").asLong()).as("a keepalive says how long etcd took").isEqualTo(1234);
  }
}
