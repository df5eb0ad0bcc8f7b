package dev.muster.health;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.muster.InvalidInputException;
import dev.muster.health.ProbeConfig.Kind;
import java.time.Duration;
import org.junit.jupiter.api.Nested;
import org.junit.jupiter.api.Test;

class ProbeConfigTest {
  @Nested
  class Parse {
    @Test
    void httpTakesThePathAfterTheColon() {
      ProbeConfig c = ProbeConfig.parse("http:/health");
      assertThat(c.kind()).isEqualTo(Kind.HTTP);
      assertThat(c.path()).isEqualTo("/health");
      assertThat(c.describe()).isEqualTo("http GET /health expecting 200");
    }

    @Test
    void httpKeepsANestedPathAndItsCase() {
      ProbeConfig c = ProbeConfig.parse(" HTTP:/Admin/Ready ");
      assertThat(c.kind()).isEqualTo(Kind.HTTP);
      assertThat(c.path()).isEqualTo("/Admin/Ready");
    }

    @Test
    void tcpHasNoPath() {
      ProbeConfig c = ProbeConfig.parse("tcp");
      assertThat(c.kind()).isEqualTo(Kind.TCP);
      assertThat(c.path()).isNull();
      assertThat(c.describe()).isEqualTo("tcp connect");
      assertThat(ProbeConfig.parse("TCP").kind()).isEqualTo(Kind.TCP);
    }

    @Test
    void grpcAloneAsksAboutTheWholeServer() {
      ProbeConfig c = ProbeConfig.parse("grpc");
      assertThat(c.kind()).isEqualTo(Kind.GRPC);
      assertThat(c.grpcService()).isEmpty();
      assertThat(c.describe()).isEqualTo("grpc.health.v1 Check(\"\")");
    }

    @Test
    void grpcWithAServiceAsksAboutThatService() {
      ProbeConfig c = ProbeConfig.parse("grpc:orders.v1.Orders");
      assertThat(c.kind()).isEqualTo(Kind.GRPC);
      assertThat(c.grpcService()).isEqualTo("orders.v1.Orders");
      assertThat(c.describe()).isEqualTo("grpc.health.v1 Check(\"orders.v1.Orders\")");
    }

    @Test
    void everyParsedFormHasTheDefaults() {
      for (String spec : new String[] {"http:/health", "tcp", "grpc", "grpc:svc"}) {
        assertDefaults(ProbeConfig.parse(spec));
      }
    }

    @Test
    void anUnknownKindNamesTheFormsToUse() {
      assertThatThrownBy(() -> ProbeConfig.parse("udp"))
          .isInstanceOfSatisfying(InvalidInputException.class, e -> {
            assertThat(e.field()).isEqualTo("probe");
            assertThat(e.value()).isEqualTo("udp");
          })
          .hasMessageContaining("\"udp\"")
          .hasMessageContaining("use http:/PATH, tcp, grpc or grpc:SERVICE");
    }

    @Test
    void emptyNullAndNearMissesAreRefusedToo() {
      for (String spec : new String[] {"", "  ", "tcp:80", "grpcx", "https:/health", "http"}) {
        assertThatThrownBy(() -> ProbeConfig.parse(spec)).as("%s", spec)
            .isInstanceOf(InvalidInputException.class)
            .hasMessageContaining("use http:/PATH, tcp, grpc or grpc:SERVICE");
      }
      assertThatThrownBy(() -> ProbeConfig.parse(null))
          .isInstanceOf(InvalidInputException.class)
          .hasMessageContaining("probe is missing");
    }

    @Test
    void anHttpPathWithoutTheLeadingSlashSaysToUseAnAbsolutePath() {
      assertThatThrownBy(() -> ProbeConfig.parse("http:health"))
          .isInstanceOfSatisfying(InvalidInputException.class,
              e -> assertThat(e.field()).isEqualTo("probe path"))
          .hasMessageContaining("\"health\"")
          .hasMessageContaining("use an absolute path such as /health");
      assertThatThrownBy(() -> ProbeConfig.parse("http:"))
          .isInstanceOf(InvalidInputException.class)
          .hasMessageContaining("use an absolute path such as /health");
    }
  }

  @Nested
  class Defaults {
    @Test
    void theFactoriesStartFromTheDefaults() {
      assertDefaults(ProbeConfig.http("/health"));
      assertDefaults(ProbeConfig.tcp());
      assertDefaults(ProbeConfig.grpc(""));
    }

    @Test
    void grpcOfNullIsTheWholeServer() {
      assertThat(ProbeConfig.grpc(null).grpcService()).isEmpty();
    }
  }

  @Nested
  class ExpectedStatuses {
    @Test
    void oneStatusIsBothEndsOfTheRange() {
      ProbeConfig c = ProbeConfig.http("/health").withExpectedStatuses("204");
      assertThat(c.expectedStatusMin()).isEqualTo(204);
      assertThat(c.expectedStatusMax()).isEqualTo(204);
      assertThat(c.describe()).isEqualTo("http GET /health expecting 204");
    }

    @Test
    void aRangeSetsBothEndsAndKeepsTheRest() {
      ProbeConfig base = ProbeConfig.http("/health").withInterval(Duration.ofSeconds(2)).withThresholds(3, 4);
      ProbeConfig c = base.withExpectedStatuses("200-399");
      assertThat(c.expectedStatusMin()).isEqualTo(200);
      assertThat(c.expectedStatusMax()).isEqualTo(399);
      assertThat(c.describe()).isEqualTo("http GET /health expecting 200-399");
      assertThat(c.interval()).isEqualTo(Duration.ofSeconds(2));
      assertThat(c.unhealthyThreshold()).isEqualTo(3);
      assertThat(c.healthyThreshold()).isEqualTo(4);
      assertThat(c.path()).isEqualTo("/health");
      assertThat(ProbeConfig.http("/h").withExpectedStatuses(" 200 - 299 ").expectedStatusMax()).isEqualTo(299);
    }

    @Test
    void textThatIsNotAStatusSaysWhatToUse() {
      for (String range : new String[] {"abc", "", "200-", "-200", "200-300-400", "2xx"}) {
        assertThatThrownBy(() -> ProbeConfig.http("/health").withExpectedStatuses(range)).as("%s", range)
            .isInstanceOfSatisfying(InvalidInputException.class,
                e -> assertThat(e.field()).isEqualTo("expected status"))
            .hasMessageContaining("use a status such as 200 or a range such as 200-399");
      }
      assertThatThrownBy(() -> ProbeConfig.http("/health").withExpectedStatuses(null))
          .isInstanceOf(InvalidInputException.class)
          .hasMessageContaining("use a status such as 200");
    }

    @Test
    void aReversedRangeIsRefused() {
      assertThatThrownBy(() -> ProbeConfig.http("/health").withExpectedStatuses("300-200"))
          .isInstanceOfSatisfying(InvalidInputException.class,
              e -> assertThat(e.field()).isEqualTo("expected status"))
          .hasMessageContaining("300-200")
          .hasMessageContaining("use a range within 100-599, such as 200 or 200-399");
    }

    @Test
    void statusesOutsideHttpsRangeAreRefused() {
      assertThatThrownBy(() -> ProbeConfig.http("/health").withExpectedStatuses("99"))
          .isInstanceOf(InvalidInputException.class).hasMessageContaining("within 100-599");
      assertThatThrownBy(() -> ProbeConfig.http("/health").withExpectedStatuses("200-600"))
          .isInstanceOf(InvalidInputException.class).hasMessageContaining("within 100-599");
      assertThat(ProbeConfig.http("/health").withExpectedStatuses("100-599").expectedStatusMax()).isEqualTo(599);
    }
  }

  @Nested
  class Validation {
    private final ProbeConfig tcp = ProbeConfig.tcp();

    @Test
    void thresholdsOfZeroSayToUseOneOrMore() {
      assertThatThrownBy(() -> tcp.withThresholds(0, 2))
          .isInstanceOfSatisfying(InvalidInputException.class,
              e -> assertThat(e.field()).isEqualTo("unhealthyThreshold"))
          .hasMessageContaining("use 1 or more probe failures");
      assertThatThrownBy(() -> tcp.withThresholds(2, 0))
          .isInstanceOfSatisfying(InvalidInputException.class,
              e -> assertThat(e.field()).isEqualTo("healthyThreshold"))
          .hasMessageContaining("use 1 or more probe passes");
      assertThat(tcp.withThresholds(1, 1).unhealthyThreshold()).isEqualTo(1);
    }

    @Test
    void intervalAndTimeoutMustBePositive() {
      assertThatThrownBy(() -> tcp.withInterval(Duration.ZERO))
          .isInstanceOf(InvalidInputException.class)
          .hasMessageContaining("probe interval").hasMessageContaining("use a positive duration such as 5s");
      assertThatThrownBy(() -> tcp.withInterval(null))
          .isInstanceOf(InvalidInputException.class).hasMessageContaining("probe interval is missing");
      assertThatThrownBy(() -> tcp.withTimeout(Duration.ofMillis(-1)))
          .isInstanceOf(InvalidInputException.class)
          .hasMessageContaining("probe timeout").hasMessageContaining("use a positive duration");
    }

    @Test
    void jitterIsAPercentFromZeroToOneHundred() {
      assertThat(tcp.withJitterPercent(0).jitterPercent()).isZero();
      assertThat(tcp.withJitterPercent(100).jitterPercent()).isEqualTo(100);
      assertThatThrownBy(() -> tcp.withJitterPercent(-1))
          .isInstanceOf(InvalidInputException.class).hasMessageContaining("use 0 to 100");
      assertThatThrownBy(() -> tcp.withJitterPercent(101))
          .isInstanceOf(InvalidInputException.class).hasMessageContaining("use 0 to 100");
    }

    @Test
    void threadsAreOneToSixtyFour() {
      assertThat(tcp.withThreads(64).threads()).isEqualTo(64);
      assertThatThrownBy(() -> tcp.withThreads(0))
          .isInstanceOf(InvalidInputException.class).hasMessageContaining("use 1 to 64");
      assertThatThrownBy(() -> tcp.withThreads(65))
          .isInstanceOf(InvalidInputException.class).hasMessageContaining("use 1 to 64");
    }

    @Test
    void anHttpProbeNeedsAnAbsolutePath() {
      assertThatThrownBy(() -> ProbeConfig.http(null))
          .isInstanceOf(InvalidInputException.class).hasMessageContaining("use an absolute path such as /health");
      assertThatThrownBy(() -> ProbeConfig.http("health"))
          .isInstanceOf(InvalidInputException.class).hasMessageContaining("use an absolute path such as /health");
    }

    @Test
    void theWithersChangeOnlyTheirField() {
      ProbeConfig c = ProbeConfig.http("/h").withInterval(Duration.ofSeconds(1)).withJitterPercent(0)
          .withTimeout(Duration.ofMillis(300)).withThresholds(5, 6).withThreads(3);
      assertThat(c).isEqualTo(new ProbeConfig(Kind.HTTP, "/h", "", 200, 200, Duration.ofSeconds(1), 0,
          Duration.ofMillis(300), 5, 6, 3));
    }
  }

  @Test
  void probeOfGrpcSaysItNeedsMusterGrpc() {
    assertThatThrownBy(() -> Probe.of(ProbeConfig.grpc(""), Runnable::run))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("muster-grpc")
        .hasMessageContaining("GrpcHealthProbe");
  }

  private static void assertDefaults(ProbeConfig c) {
    assertThat(c.interval()).isEqualTo(Duration.ofSeconds(5));
    assertThat(c.jitterPercent()).isEqualTo(10);
    assertThat(c.timeout()).isEqualTo(Duration.ofSeconds(1));
    assertThat(c.unhealthyThreshold()).isEqualTo(2);
    assertThat(c.healthyThreshold()).isEqualTo(2);
    assertThat(c.threads()).isEqualTo(2);
    assertThat(c.expectedStatusMin()).isEqualTo(200);
    assertThat(c.expectedStatusMax()).isEqualTo(200);
  }
}
