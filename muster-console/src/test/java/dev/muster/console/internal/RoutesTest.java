package dev.muster.console.internal;

import static org.assertj.core.api.Assertions.assertThat;

import java.net.InetAddress;
import java.net.InetSocketAddress;
import org.junit.jupiter.api.Test;

class RoutesTest {
  @Test
  void aLoopbackConsoleAnswersOnlyToItsOwnHostNames() throws Exception {
    InetSocketAddress bound = new InetSocketAddress(InetAddress.getByName("127.0.0.1"), 8080);
    assertThat(Routes.allowedHosts(bound))
        .containsExactlyInAnyOrder("127.0.0.1:8080", "localhost:8080", "[::1]:8080");
  }

  @Test
  void aWildcardConsoleChecksNoHost() throws Exception {
    assertThat(Routes.allowedHosts(new InetSocketAddress(InetAddress.getByName("0.0.0.0"), 8080))).isEmpty();
  }

  @Test
  void theQueryIsDecodedAndTheFirstValueWins() {
    assertThat(Routes.query("page=service&ns=default&service=a%2Fb&page=x"))
        .containsEntry("page", "service").containsEntry("ns", "default").containsEntry("service", "a/b");
    assertThat(Routes.query(null)).isEmpty();
  }
}
