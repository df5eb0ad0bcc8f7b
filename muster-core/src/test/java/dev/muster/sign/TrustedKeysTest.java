package dev.muster.sign;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.muster.InvalidInputException;
import dev.muster.cache.CacheConfig;
import java.util.List;
import org.junit.jupiter.api.Test;

/** Which keys apply to which service, and the cache configuration's check of them. */
class TrustedKeysTest {
  private static final TrustedKey TEAM = SigningKey.generate().trustedKey();
  private static final TrustedKey PAYMENTS_OLD = SigningKey.generate().trustedKey();
  private static final TrustedKey PAYMENTS_NEW = SigningKey.generate().trustedKey();

  private final TrustedKeys trust = TrustedKeys.builder()
      .namespace("default", TEAM)
      .service("default", "payments", PAYMENTS_OLD)
      .service("default", "payments", List.of(PAYMENTS_NEW, PAYMENTS_OLD))
      .build();

  @Test
  void aServiceWithItsOwnKeysUsesThemInsteadOfItsNamespaces() {
    assertThat(trust.forService("default", "payments")).containsExactly(PAYMENTS_OLD, PAYMENTS_NEW);
  }

  @Test
  void everyOtherServiceOfTheNamespaceUsesTheNamespacesKeys() {
    assertThat(trust.forService("default", "orders")).containsExactly(TEAM);
  }

  @Test
  void anotherNamespaceHasNoTrustedKey() {
    assertThat(trust.forService("prod", "payments")).isEmpty();
    assertThat(trust.isEmpty()).isFalse();
  }

  @Test
  void noScopesIsNone() {
    assertThat(TrustedKeys.builder().build()).isSameAs(TrustedKeys.NONE);
    assertThat(TrustedKeys.NONE.isEmpty()).isTrue();
    assertThat(TrustedKeys.NONE.forService("default", "orders")).isEmpty();
  }

  @Test
  void equalScopesAndKeysAreEqualAndPrintTheirKeyIds() {
    TrustedKeys same = TrustedKeys.builder().namespace("default", TEAM)
        .service("default", "payments", PAYMENTS_OLD, PAYMENTS_NEW).build();
    assertThat(same).isEqualTo(trust).hasSameHashCodeAs(trust);
    assertThat(trust.toString()).isEqualTo("TrustedKeys[default: [" + TEAM.keyId() + "], default/payments: ["
        + PAYMENTS_OLD.keyId() + ", " + PAYMENTS_NEW.keyId() + "]]");
  }

  @Test
  void aScopeWithoutKeysOrWithANullKeyIsRefused() {
    assertThatThrownBy(() -> TrustedKeys.builder().namespace("default")).isInstanceOf(InvalidInputException.class)
        .hasMessageContaining("trusted keys of default").hasMessageContaining("give at least one key");
    assertThatThrownBy(() -> TrustedKeys.builder().service("default", "orders", TEAM, null))
        .isInstanceOf(InvalidInputException.class).hasMessageContaining("trusted keys of default/orders");
    assertThatThrownBy(() -> TrustedKeys.builder().service("default", " ", TEAM))
        .isInstanceOfSatisfying(InvalidInputException.class, e -> assertThat(e.field()).isEqualTo("service"));
  }

  @Test
  void aCacheConfigRefusesTrustedKeysThatHaveNoneForItsService() {
    assertThatThrownBy(() -> CacheConfig.builder("orders").namespace("prod").trustedKeys(trust).build())
        .isInstanceOfSatisfying(InvalidInputException.class, e -> {
          assertThat(e.field()).isEqualTo("trustedKeys");
          assertThat(e.getMessage()).contains("trust at least one key for prod/orders");
        });
    assertThat(CacheConfig.builder("orders").trustedKeys(trust).build().trustedKeys()).isEqualTo(trust);
    assertThat(CacheConfig.builder("orders").build().trustedKeys()).isSameAs(TrustedKeys.NONE);
    assertThat(CacheConfig.builder("orders").trustedKeys(null).build().trustedKeys()).isSameAs(TrustedKeys.NONE);
    assertThat(CacheConfig.builder("orders").trustedKeys(trust).build().toBuilder().build().trustedKeys())
        .isEqualTo(trust);
  }
}
