package dev.muster.registry;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.muster.InvalidInputException;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.NullAndEmptySource;
import org.junit.jupiter.params.provider.ValueSource;
import org.junit.jupiter.api.Test;

class NamesTest {

  @ParameterizedTest
  @ValueSource(strings = {"a", "7", "v1", "orders", "api-gw", "a-b-c", "0123", "x--y"})
  void acceptsLowerCaseLettersDigitsAndInnerDashes(String name) {
    assertThat(Names.requireValid("service", name)).isEqualTo(name);
  }

  @Test
  void acceptsSixtyThreeCharacters() {
    String name = "a".repeat(63);

    assertThat(Names.isValid(name)).isTrue();
  }

  @Test
  void rejectsSixtyFourCharacters() {
    assertThat(Names.isValid("a".repeat(64))).isFalse();
  }

  @ParameterizedTest
  @ValueSource(strings = {"Orders", "orders_api", "-orders", "orders-", "-", "or ders", "orders.svc", "ördérs"})
  void rejectsAnythingThatIsNotADnsLabel(String name) {
    assertThat(Names.isValid(name)).isFalse();
  }

  @Test
  void rejectionNamesTheFieldTheValueAndTheRule() {
    assertThatThrownBy(() -> Names.requireValid("service", "Orders_API"))
        .isInstanceOf(InvalidInputException.class)
        .hasMessage("service \"Orders_API\" is invalid: use 1-63 characters of a-z, 0-9 and '-', starting and"
            + " ending with a letter or digit")
        .satisfies(e -> {
          assertThat(((InvalidInputException) e).field()).isEqualTo("service");
          assertThat(((InvalidInputException) e).value()).isEqualTo("Orders_API");
        });
  }

  @ParameterizedTest
  @NullAndEmptySource
  void rejectsNullAndEmptyWithAClearMessage(String name) {
    assertThatThrownBy(() -> Names.requireValid("namespace", name))
        .isInstanceOf(InvalidInputException.class)
        .hasMessageStartingWith(name == null ? "namespace is missing: use 1-63" : "namespace is empty: use 1-63");
  }

  @Test
  void theLoopAgreesWithTheDnsLabelRegularExpressionOnRandomStrings() {
    java.util.regex.Pattern label = java.util.regex.Pattern.compile("[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?");
    java.util.Random random = new java.util.Random(7);
    String alphabet = "ab09-_A.z";
    for (int n = 0; n < 50_000; n++) {
      StringBuilder sb = new StringBuilder();
      int length = random.nextInt(n % 10 == 0 ? 70 : 6);
      for (int i = 0; i < length; i++) {
        sb.append(alphabet.charAt(random.nextInt(alphabet.length())));
      }
      String value = sb.toString();
      assertThat(Names.isValid(value)).as(value).isEqualTo(label.matcher(value).matches());
    }
  }
}
