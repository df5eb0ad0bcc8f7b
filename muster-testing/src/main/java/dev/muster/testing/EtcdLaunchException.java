package dev.muster.testing;

/**
 * An etcd process could not be started, did not become healthy in time, or did not answer a control call.
 * The message is one line saying what failed and what to do; when a member's log explains it, the log's
 * last lines follow on the next lines.
 */
public final class EtcdLaunchException extends RuntimeException {
  private static final long serialVersionUID = 1L;

  public EtcdLaunchException(String message) {
    super(message);
  }

  public EtcdLaunchException(String message, Throwable cause) {
    super(message, cause);
  }
}
