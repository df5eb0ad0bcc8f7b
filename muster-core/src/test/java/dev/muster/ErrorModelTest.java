package dev.muster;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import org.junit.jupiter.api.Test;

class ErrorModelTest {

  @Test
  void invalidInputNamesTheFieldTheValueAndWhatIsAllowed() {
    InvalidInputException e = new InvalidInputException("service", "Orders_API", "use lower case");

    assertThat(e).hasMessage("service \"Orders_API\" is invalid: use lower case");
    assertThat(e.field()).isEqualTo("service");
    assertThat(e.value()).isEqualTo("Orders_API");
    assertThat(e.code()).isEqualTo(ErrorCode.INVALID_INPUT);
  }

  @Test
  void invalidInputSaysMissingForNullAndEmptyForEmpty() {
    assertThat(new InvalidInputException("service", null, "use x")).hasMessage("service is missing: use x");
    assertThat(new InvalidInputException("service", "", "use x")).hasMessage("service is empty: use x");
  }

  @Test
  void invalidInputShowsNumbersWithoutQuotes() {
    assertThat(new InvalidInputException("port", 0, "use 1-65535")).hasMessage("port 0 is invalid: use 1-65535");
  }

  @Test
  void messagesStayOnOneLineEvenWhenTheValueHasLineBreaks() {
    InvalidInputException e = new InvalidInputException("service", "a\nb", "use x");

    assertThat(e.getMessage()).doesNotContain("\n").contains("\"a\\nb\"");
    assertThat(new MusterException(ErrorCode.INTERNAL, "first\n  second").getMessage()).isEqualTo("first second");
  }

  @Test
  void veryLongValuesAreCutInTheMessage() {
    String value = "x".repeat(5000);

    assertThat(new InvalidInputException("service", value, "use x").getMessage())
        .hasSizeLessThan(200)
        .contains("(5000 characters)");
  }

  @Test
  void duplicateInstanceNamesKeyLeaseAndRemainingTtlAndWhatToDo() {
    DuplicateInstanceException e =
        new DuplicateInstanceException("/muster/default/orders/v1/h-8080-abcdef", 0x694d7b1b8ee0e54bL,
            Duration.ofSeconds(12));

    assertThat(e.getMessage())
        .contains("/muster/default/orders/v1/h-8080-abcdef")
        .contains("694d7b1b8ee0e54b")
        .contains("12s left")
        .contains("choose another instance id")
        .doesNotContain("--")
        .contains("stop the other provider");
    assertThat(e.key()).isEqualTo("/muster/default/orders/v1/h-8080-abcdef");
    assertThat(e.holderLease()).isEqualTo(0x694d7b1b8ee0e54bL);
    assertThat(e.holderTtl()).isEqualTo(Duration.ofSeconds(12));
    assertThat(e.code()).isEqualTo(ErrorCode.DUPLICATE_INSTANCE);
  }

  @Test
  void duplicateInstanceWritesSubSecondTtlInMillisecondsAndExpiredAsExpiring() {
    assertThat(new DuplicateInstanceException("/k", 1, Duration.ofMillis(1500))).hasMessageContaining("1500ms left");
    assertThat(new DuplicateInstanceException("/k", 1, Duration.ofSeconds(-1))).hasMessageContaining("expiring now");
  }

  @Test
  void registryUnavailableKeepsItsCause() {
    RuntimeException cause = new RuntimeException("connection refused");
    RegistryUnavailableException e = new RegistryUnavailableException("etcd at http://127.0.0.1:2379 is down", cause);

    assertThat(e).hasCause(cause);
    assertThat(e.code()).isEqualTo(ErrorCode.REGISTRY_UNAVAILABLE);
  }

  @Test
  void malformedValueNamesTheKeyAndTheProblem() {
    MalformedValueException e = new MalformedValueException("default/orders/v1/x", "not JSON");

    assertThat(e).hasMessage("value of default/orders/v1/x is malformed: not JSON");
    assertThat(e.key()).isEqualTo("default/orders/v1/x");
    assertThat(e.problem()).isEqualTo("not JSON");
    assertThat(e.code()).isEqualTo(ErrorCode.INVALID_INPUT);
  }
}
