package dev.muster.call;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.muster.outlier.Outcome;
import java.io.IOException;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

class ResultsTest {
  @Test
  void aSuccessCarriesNoFailure() {
    assertThatThrownBy(() -> new AttemptResult<>("x", new IOException("no"), Outcome.SUCCESS))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("outcome SUCCESS has failure java.io.IOException: no");
  }

  @Test
  void aFailureNeedsItsCause() {
    assertThatThrownBy(() -> AttemptResult.serverError("busy", null))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessage("outcome HTTP_5XX has no failure: give the cause");
  }

  @Test
  void aServerErrorKeepsTheResponse() {
    AttemptResult<String> r = AttemptResult.serverError("busy", new IOException("HTTP 503"));

    assertThat(r.ok()).isFalse();
    assertThat(r.value()).isEqualTo("busy");
  }

  @Test
  void aCallResultCopiesTheEndpointsTried() {
    List<String> tried = new ArrayList<>(List.of("a", "b"));
    CallResult<String> result = new CallResult<>("v", null, Outcome.SUCCESS, tried, false);
    tried.add("c");

    assertThat(result.endpointsTried()).containsExactly("a", "b");
    assertThat(result.attempts()).isEqualTo(2);
    assertThat(result.retried()).isTrue();
  }

  @Test
  void aCallResultWithoutAttemptMustHaveFailed() {
    assertThatThrownBy(() -> new CallResult<>("v", null, null, List.of(), false))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessage("a call without failure has outcome null: use SUCCESS");
  }
}
