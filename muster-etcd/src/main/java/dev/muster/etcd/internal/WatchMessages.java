package dev.muster.etcd.internal;

import com.google.protobuf.UnknownFieldSet;
import io.etcd.jetcd.api.WatchCreateRequest;
import io.etcd.jetcd.api.WatchRequest;
import io.etcd.jetcd.api.WatchResponse;
import io.etcd.jetcd.common.exception.ErrorCode;
import io.etcd.jetcd.common.exception.EtcdExceptionFactory;
import io.grpc.Status;

/**
 * The watch messages {@link WatchStream} writes and what the ones it reads mean to a cache: a create with etcd's
 * {@code watch_id}, and for a watch that ends, the error jetcd 0.8.6's watcher gave its listener in the same case
 * ({@code WatchImpl.WatcherImpl.onNext}), so that {@code EtcdCacheIo} classifies it as it did on jetcd's path.
 *
 * <p>Stateless.
 */
final class WatchMessages {
  /** etcd's number of {@code WatchCreateRequest.watch_id}, a field jetcd 0.8.6's generated class does not know. */
  private static final int WATCH_ID_FIELD = 7;

  private WatchMessages() {}

  /**
   * The create with {@code watch_id} set as an unknown field (muster-bench/probe/WatchMuxProbe.java showed 3.5.30
   * and 3.4.23 honour it). {@code id} must not be 0, which etcd reads as "assign one".
   */
  static WatchRequest create(WatchCreateRequest.Builder create, long id) {
    create.setUnknownFields(UnknownFieldSet.newBuilder()
        .addField(WATCH_ID_FIELD, UnknownFieldSet.Field.newBuilder().addVarint(id).build()).build());
    return WatchRequest.newBuilder().setCreateRequest(create).build();
  }

  /**
   * A create etcd refused ({@code created} and {@code canceled}, or the id −1): CANCELLED with etcd's reason
   * (permission denied, invalid auth token), or INTERNAL when etcd could not create it and gave no reason.
   */
  static Throwable refusal(WatchResponse r) {
    if (r.getWatchId() == -1 && r.getCancelReason().isEmpty()) {
      return EtcdExceptionFactory.newEtcdException(ErrorCode.INTERNAL, "etcd server failed to create watch id");
    }
    return Status.CANCELLED.withDescription(r.getCancelReason()).asRuntimeException();
  }

  /** A watch etcd cancelled after creating it: compacted, a future revision, or etcd's reason. */
  static Throwable cancellation(WatchResponse r) {
    if (r.getCompactRevision() != 0) {
      return EtcdExceptionFactory.newCompactedException(r.getCompactRevision());
    }
    if (r.getCancelReason().isEmpty()) {
      return EtcdExceptionFactory.newEtcdException(ErrorCode.OUT_OF_RANGE,
          "etcdserver: mvcc: required revision is a future revision");
    }
    return EtcdExceptionFactory.newEtcdException(ErrorCode.FAILED_PRECONDITION, r.getCancelReason());
  }

  /**
   * What a watch on a stream that ended with {@code t} gets: etcd's "no leader" and its refusals as they are; any
   * other end (the connection broke, etcd ended the stream, gRPC cancelled it) as UNAVAILABLE, as jetcd's watchers
   * failed when the connection under them broke.
   */
  static Throwable streamFailure(Throwable t) {
    if (EtcdErrors.isNoLeader(t) || EtcdErrors.classify(t) != EtcdErrors.Kind.UNAVAILABLE) {
      return t;
    }
    return Status.UNAVAILABLE.withDescription("the watch stream broke: " + EtcdErrors.describe(t)).withCause(t)
        .asRuntimeException();
  }
}
