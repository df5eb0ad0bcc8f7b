package dev.muster.console.internal;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.ByteArrayOutputStream;
import java.nio.charset.StandardCharsets;
import org.junit.jupiter.api.Test;

class StreamClientTest {
  private final StreamClient client = new StreamClient(new StreamClient.View("overview", "", ""));

  @Test
  void aBrowserThatDoesNotReadIsDroppedInsteadOfWaitedFor() {
    for (int i = 0; i < StreamClient.QUEUE; i++) {
      client.offer("state", "{}");
    }
    assertThat(client.isClosed()).isFalse();
    client.offer("state", "{}"); // returns at once: the queue is full
    assertThat(client.isClosed()).isTrue();
  }

  @Test
  void queuedMessagesAreWrittenAsServerSentEvents() throws Exception {
    client.offer("state", "{\"a\":1}");
    ByteArrayOutputStream out = new ByteArrayOutputStream() {
      @Override
      public void flush() {
        if (size() > "retry: 1000\n\n".length()) {
          client.close(); // one message is enough: end serve()
        }
      }
    };
    client.serve(out);
    assertThat(out.toString(StandardCharsets.UTF_8)).isEqualTo("retry: 1000\n\nevent: state\ndata: {\"a\":1}\n\n");
  }
}
