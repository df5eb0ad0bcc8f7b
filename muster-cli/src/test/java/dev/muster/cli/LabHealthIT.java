package dev.muster.cli;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/** Two lab scenarios through the jar: TLS and auth end to end, and the panic threshold against its control. */
@Timeout(value = 6, unit = TimeUnit.MINUTES)
class LabHealthIT {
  @Test
  void tlsAuthAndASharedDependencyBlipRunEndToEndAndPass(@TempDir Path out) throws Exception {
    String table = LabSubset.run(out, List.of("tls_auth_round_trip", "shared_dependency_blip"));
    assertThat(table).containsPattern("tls_auth_round_trip +PASS .*SIGTERM p1: SIGTERM→revoked \\d+ ms.*SIGKILL p2:"
        + " window \\d+ ms.*register as hello-consumer: exit 5");
    assertThat(table).containsPattern("shared_dependency_blip +PASS .*P \\(panic threshold 50 %\\) \\d+ of \\d+ calls"
        + " failed.*C \\(--no-panic, the control\\) \\d+ of \\d+ failed");
  }
}
