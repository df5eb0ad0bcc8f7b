package dev.muster.etcd.internal;

import static io.etcd.jetcd.common.exception.EtcdExceptionFactory.newEtcdException;
import static org.assertj.core.api.Assertions.assertThat;

import io.etcd.jetcd.common.exception.ErrorCode;
import io.grpc.Status;
import java.util.concurrent.CompletionException;
import org.junit.jupiter.api.Test;

/** What a failure says about the shared connection: only a connection failure may replace it. */
class EtcdErrorsTest {
  @Test
  void aWatchEtcdRefusedArrivesFromJetcdAsCancelledAndIsARefusalNotAConnectionFailure() {
    var refused = newEtcdException(ErrorCode.CANCELLED, "etcdserver: permission denied");

    assertThat(EtcdErrors.classifyWatch(refused)).isEqualTo(EtcdErrors.Kind.OTHER);
    assertThat(EtcdErrors.classifyWatch(new CompletionException(refused))).isEqualTo(EtcdErrors.Kind.OTHER);
  }

  @Test
  void aBrokenOrLeaderlessWatchStreamIsAConnectionFailure() {
    assertThat(EtcdErrors.classifyWatch(Status.UNAVAILABLE.withDescription("io exception").asRuntimeException()))
        .isEqualTo(EtcdErrors.Kind.UNAVAILABLE);
    assertThat(EtcdErrors.classifyWatch(newEtcdException(ErrorCode.UNAVAILABLE, "etcdserver: no leader")))
        .isEqualTo(EtcdErrors.Kind.UNAVAILABLE);
  }

  @Test
  void otherWatchCancellationsAndNotFoundLeaveTheConnectionAlone() {
    assertThat(EtcdErrors.classifyWatch(newEtcdException(ErrorCode.FAILED_PRECONDITION, "mvcc: watcher range"
        + " is empty"))).isEqualTo(EtcdErrors.Kind.OTHER);
    assertThat(EtcdErrors.classifyWatch(newEtcdException(ErrorCode.NOT_FOUND, "?"))).isEqualTo(EtcdErrors.Kind.OTHER);
  }

  @Test
  void forUnaryCallsCancelledStaysAConnectionFailure() {
    // Muster cancels a unary call's future itself when it times out: that is the connection not answering.
    assertThat(EtcdErrors.classify(newEtcdException(ErrorCode.CANCELLED, "cancelled")))
        .isEqualTo(EtcdErrors.Kind.UNAVAILABLE);
    assertThat(EtcdErrors.classify(new java.util.concurrent.CancellationException()))
        .isEqualTo(EtcdErrors.Kind.UNAVAILABLE);
  }
}
