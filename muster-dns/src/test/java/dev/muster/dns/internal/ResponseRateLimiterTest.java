package dev.muster.dns.internal;

import static org.assertj.core.api.Assertions.assertThat;

import dev.muster.dns.internal.ResponseRateLimiter.Verdict;
import java.net.InetAddress;
import java.util.EnumMap;
import java.util.Map;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;
import org.xbill.DNS.DClass;
import org.xbill.DNS.Message;
import org.xbill.DNS.Name;
import org.xbill.DNS.Record;
import org.xbill.DNS.Type;

/** Response rate limiting on a fake clock: per response, per prefix, the slip, prefixes and exemptions. */
class ResponseRateLimiterTest {
  private final AtomicLong now = new AtomicLong(1_000_000_000L);

  private ResponseRateLimiter limiter(int perSecond, int burst, int responsesPerSecond, int slip) {
    return new ResponseRateLimiter(perSecond, burst, responsesPerSecond, slip, 24, 56, a -> false, now::get);
  }

  private static byte[] query(String name, int type) throws Exception {
    return Message.newQuery(Record.newRecord(Name.fromString(name), type, DClass.IN)).toWire();
  }

  private static InetAddress ip(String s) throws Exception {
    return InetAddress.getByName(s);
  }

  private static Map<Verdict, Integer> ask(ResponseRateLimiter l, String source, byte[] query, int n)
      throws Exception {
    Map<Verdict, Integer> out = new EnumMap<>(Verdict.class);
    for (int i = 0; i < n; i++) {
      out.merge(l.admit(ip(source), query, query.length), 1, Integer::sum);
    }
    return out;
  }

  @Test
  void oneQuestionRepeatedToOnePrefixIsLimitedAndEverySecondOneOverSlips() throws Exception {
    ResponseRateLimiter l = limiter(0, 1, 10, 2);
    byte[] q = query("orders.default.muster.", Type.A);
    int answered = 0;
    int slipped = 0;
    int dropped = 0;
    for (int i = 0; i < 40; i++) { // from 40 addresses of one /24: one prefix, as a spoofer's victim is
      switch (l.admit(ip("127.0.9." + (i + 1)), q, q.length)) {
        case ANSWER -> answered++;
        case SLIP -> slipped++;
        case DROP -> dropped++;
      }
    }
    assertThat(answered).isEqualTo(10);
    assertThat(slipped).isEqualTo(15);
    assertThat(dropped).isEqualTo(15);
    // another question from the same prefix has its own bucket; the same question from another prefix too
    assertThat(ask(l, "127.0.9.1", query("users.default.muster.", Type.A), 10)).containsOnlyKeys(Verdict.ANSWER);
    assertThat(ask(l, "127.0.9.1", query("orders.default.muster.", Type.AAAA), 10)).containsOnlyKeys(Verdict.ANSWER);
    assertThat(ask(l, "127.0.10.1", q, 10)).containsOnlyKeys(Verdict.ANSWER);
    // names compare without case
    assertThat(ask(l, "127.0.9.1", query("ORDERS.default.muster.", Type.A), 1)).doesNotContainKey(Verdict.ANSWER);
    // the bucket refills: half a second later, half the rate
    now.addAndGet(500_000_000L);
    assertThat(ask(l, "127.0.9.7", q, 10).get(Verdict.ANSWER)).isEqualTo(5);
  }

  @Test
  void underTheLimitEveryQueryIsAnswered() throws Exception {
    ResponseRateLimiter l = limiter(100, 100, 10, 2);
    byte[] q = query("orders.default.muster.", Type.SRV);
    for (int second = 0; second < 5; second++) {
      assertThat(ask(l, "10.1.2.3", q, 10)).containsOnlyKeys(Verdict.ANSWER);
      now.addAndGet(1_000_000_000L);
    }
  }

  @Test
  void manyQuestionsToOnePrefixAreBoundedByThePrefixLimit() throws Exception {
    ResponseRateLimiter l = limiter(20, 20, 10, 0); // slip 0: all over the limit dropped
    int answered = 0;
    for (int i = 0; i < 100; i++) {
      byte[] q = query("i" + i + "._orders._tcp.default.muster.", Type.SRV);
      answered += l.admit(ip("192.0.2." + (i % 250 + 1)), q, q.length) == Verdict.ANSWER ? 1 : 0;
    }
    assertThat(answered).isEqualTo(20);
    byte[] q = query("x.default.muster.", Type.A);
    assertThat(ask(l, "192.0.3.1", q, 5)).containsOnlyKeys(Verdict.ANSWER); // another /24
  }

  @Test
  void ipv6SourcesAreOnePerSlash56AndExemptSourcesAreNeverLimited() throws Exception {
    ResponseRateLimiter l = new ResponseRateLimiter(0, 1, 5, 1, 24, 56,
        a -> a.getHostAddress().startsWith("10.9."), now::get);
    byte[] q = query("orders.default.muster.", Type.A);
    assertThat(ask(l, "2001:db8:0:1::1", q, 5)).containsOnlyKeys(Verdict.ANSWER);
    assertThat(ask(l, "2001:db8:0:ff::2", q, 5)).containsOnlyKeys(Verdict.SLIP); // same /56, slip 1: all TC
    assertThat(ask(l, "2001:db8:0:100::1", q, 5)).containsOnlyKeys(Verdict.ANSWER); // the next /56
    assertThat(ask(l, "10.9.0.1", q, 100)).containsOnlyKeys(Verdict.ANSWER);
  }

  @Test
  void offAnswersEverything() throws Exception {
    ResponseRateLimiter l = limiter(0, 1, 0, 2);
    assertThat(ask(l, "10.1.2.3", query("a.default.muster.", Type.A), 10_000)).containsOnlyKeys(Verdict.ANSWER);
  }

  @Test
  void theQuestionIsReadFromTheWireOrNotAtAll() throws Exception {
    byte[] q = query("orders.default.muster.", Type.A);
    assertThat(ResponseRateLimiter.questionEnd(q, q.length)).isEqualTo(q.length);
    assertThat(ResponseRateLimiter.questionEnd(q, q.length - 1)).isEqualTo(-1);
    assertThat(ResponseRateLimiter.questionEnd(q, 12)).isEqualTo(-1);
    byte[] two = q.clone();
    two[5] = 2;
    assertThat(ResponseRateLimiter.questionEnd(two, two.length)).isEqualTo(-1);
    assertThat(ResponseRateLimiter.questionHash(q, q.length))
        .isEqualTo(ResponseRateLimiter.questionHash(query("Orders.Default.MUSTER.", Type.A), q.length))
        .isNotEqualTo(ResponseRateLimiter.questionHash(query("orders.default.muster.", Type.AAAA), q.length));
  }
}
