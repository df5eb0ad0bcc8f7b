package dev.muster.cache;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.muster.InvalidInputException;
import java.util.concurrent.Executor;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import org.junit.jupiter.api.Test;

class CacheConfigTest {
  @Test
  void listenersRunOnTheSharedPoolUnlessTheConfigGivesAnExecutorWhichToBuilderKeeps() {
    Executor mine = Runnable::run;

    assertThat(CacheConfig.builder("orders").build().listenerExecutor()).isNull();
    CacheConfig config = CacheConfig.builder("orders").listenerExecutor(mine).build();
    assertThat(config.listenerExecutor()).isSameAs(mine);
    assertThat(config.toBuilder().build().listenerExecutor()).isSameAs(mine);
    assertThat(config.toBuilder().listenerExecutor(null).build().listenerExecutor()).isNull();
  }

  @Test
  void anExecutorAlreadyShutDownIsRefusedByName() {
    ExecutorService stopped = Executors.newSingleThreadExecutor();
    stopped.shutdown();

    assertThatThrownBy(() -> CacheConfig.builder("orders").listenerExecutor(stopped).build())
        .isInstanceOf(InvalidInputException.class)
        .hasMessageContaining("listenerExecutor")
        .hasMessageContaining("shut down");
  }
}
