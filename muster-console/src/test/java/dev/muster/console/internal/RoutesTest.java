package dev.muster.console.internal;

import static org.assertj.core.api.Assertions.assertThat;

import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.util.List;
import org.junit.jupiter.api.Test;

class RoutesTest {
  @Test
  void aLoopbackConsoleAnswersOnlyToItsOwnHostNames() throws Exception {
    InetSocketAddress bound = new InetSocketAddress(InetAddress.getByName("127.0.0.1"), 8080);
    assertThat(Routes.allowedHosts(bound, List.of(), List.of()))
        .containsExactlyInAnyOrder("127.0.0.1:8080", "localhost:8080", "[::1]:8080");
  }

  @Test
  void aWildcardConsoleStillChecksTheHostAgainstLoopbackItsInterfacesAndTheNamesGiven() throws Exception {
    InetSocketAddress bound = new InetSocketAddress(InetAddress.getByName("0.0.0.0"), 8080);
    assertThat(Routes.allowedHosts(bound, List.of("Console.Example.com", "proxy.example.com:443"),
        List.of(InetAddress.getByName("10.1.2.3"), InetAddress.getByName("fe80::1"))))
        .containsExactlyInAnyOrder("127.0.0.1:8080", "localhost:8080", "[::1]:8080", "10.1.2.3:8080",
            "[fe80:0:0:0:0:0:0:1]:8080", "console.example.com:8080", "proxy.example.com:443");
  }

  @Test
  void aHostWithoutPortIsPort80AndCaseDoesNotMatter() {
    assertThat(Routes.normalHost("Console.Example.com")).isEqualTo("console.example.com:80");
    assertThat(Routes.normalHost("[::1]")).isEqualTo("[::1]:80");
    assertThat(Routes.normalHost("[::1]:8080")).isEqualTo("[::1]:8080");
  }

  @Test
  void theQueryIsDecodedAndTheFirstValueWins() {
    assertThat(Routes.query("page=service&ns=default&service=a%2Fb&page=x"))
        .containsEntry("page", "service").containsEntry("ns", "default").containsEntry("service", "a/b");
    assertThat(Routes.query(null)).isEmpty();
  }
}
