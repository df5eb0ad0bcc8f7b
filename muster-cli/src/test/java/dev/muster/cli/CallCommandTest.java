package dev.muster.cli;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.PrintWriter;
import java.io.StringWriter;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * {@code muster call}'s health, staleness and slow-start options in process: each bad value exits 2 with one stderr
 * line and no stack trace, before etcd is contacted (nothing listens on the endpoint used here).
 */
class CallCommandTest {
  private static final String NOWHERE = "http://127.0.0.1:1";

  @Test
  void badHealthOptionsAreOneLineAndExit2() {
    String[][] cases = {
        {"--probe", "udp"},
        {"--probe", "http:health"},
        {"--probe", "http:/health", "--probe-expect", "abc"},
        {"--probe", "tcp", "--unhealthy-threshold", "0"},
        {"--panic-threshold", "101"},
        {"--slow-start-min-weight", "0"},
        {"--max-stale", "0s"},
        {"--stale-policy", "SOMETIMES"},
    };
    for (String[] bad : cases) {
      List<String> args = new ArrayList<>(List.of("call", "x", "/hello", "--count", "1", "--endpoints", NOWHERE));
      args.addAll(List.of(bad));
      StringWriter out = new StringWriter();
      StringWriter err = new StringWriter();

      int exit = Main.run(args.toArray(String[]::new), new PrintWriter(out, true), new PrintWriter(err, true));

      String stderr = err.toString().strip();
      assertThat(exit).as("%s: %s", List.of(bad), stderr).isEqualTo(2);
      assertThat(stderr).as("%s", List.of(bad)).isNotEmpty().doesNotContain("\n").doesNotContain("\tat ")
          .startsWith("muster: ");
    }
  }
}
