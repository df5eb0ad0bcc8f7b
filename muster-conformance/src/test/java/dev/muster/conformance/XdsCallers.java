package dev.muster.conformance;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.google.common.util.concurrent.ListenableFuture;
import dev.muster.grpc.echo.Echo;
import dev.muster.testing.ChildProcess;
import io.grpc.CallOptions;
import io.grpc.Grpc;
import io.grpc.InsecureChannelCredentials;
import io.grpc.ManagedChannel;
import io.grpc.Status;
import io.grpc.stub.ClientCalls;
import io.grpc.xds.InternalSharedXdsClientPoolProvider;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

/**
 * The two xDS clients nobody here wrote, each calling {@code xds:///SERVICE} one call after another at a steady
 * pace and recording every outcome: grpc-java's ({@code io.grpc:grpc-xds}) on a thread of this JVM, and Node's
 * ({@code @grpc/grpc-js-xds}) as a {@code node} process running {@code src/test/node/xds-client.js}. Both read the
 * bootstrap {@code muster xds bootstrap} prints.
 */
final class XdsCallers {
  private XdsCallers() {}

  /** One call's outcome: when it started (epoch ms), who answered, or the status code it failed with. */
  record Call(long at, boolean ok, String servedBy, int code, String error) {}

  /** A client calling on its own until closed. */
  interface Caller extends AutoCloseable {
    String name();

    /** Every call so far, in order. */
    List<Call> calls();

    /** What the client is doing now, for a failure's message (grpc-java: its calling thread's stack). */
    default String state() {
      return "";
    }

    /** The calls started at or after {@code epochMillis}. */
    default List<Call> since(long epochMillis) {
      return calls().stream().filter(c -> c.at() >= epochMillis).toList();
    }

    @Override
    void close();
  }

  /** The client of {@code kind} ("grpc-java" or "node") for {@code service}, with {@code bootstrap} as its JSON. */
  static Caller start(String kind, String service, String bootstrap, long intervalMs) {
    return kind.equals("node") ? new NodeCaller(service, bootstrap, intervalMs)
        : new JavaCaller(service, bootstrap, intervalMs);
  }

  /**
   * grpc-java: one channel to {@code xds:///SERVICE}. grpc-java keeps one xDS client per target, and reads the
   * bootstrap's system property and variables once per JVM; the bootstrap override, the per-JVM knob grpc-java's
   * own tests use, is read when a target's xDS client is made. So each test uses its own service (its own target)
   * and sets the override just before its channel makes its client.
   */
  static final class JavaCaller implements Caller {
    private final ManagedChannel channel;
    private final List<Call> calls = new CopyOnWriteArrayList<>();
    private final Thread thread;
    private volatile boolean stop;

    JavaCaller(String service, String bootstrap, long intervalMs) {
      synchronized (JavaCaller.class) {
        channel = Grpc.newChannelBuilder("xds:///" + service, InsecureChannelCredentials.create()).build();
        // after the build: grpc-java 1.76's XdsNameResolver constructor sets the override back to none
        InternalSharedXdsClientPoolProvider.setDefaultProviderBootstrapOverride(parse(bootstrap));
        channel.getState(true); // makes the target's xDS client now, with this bootstrap
      }
      thread = new Thread(() -> {
        while (!stop) {
          long at = System.currentTimeMillis();
          // A future, not the blocking stub: grpc-java 1.76's blocking unary call has an open report of a thread
          // parked forever in its ThreadlessExecutor with the call's outcome queued (grpc/grpc-java#12648, 1.76.0),
          // and a clean-clone suite saw this thread make no call, not even a failed one, for 28 s. A call with no
          // outcome 3 s past its 2 s deadline is recorded as failed (code -2), so a hang still fails the test.
          ListenableFuture<JsonNode> reply = null;
          try {
            reply = ClientCalls.futureUnaryCall(channel.newCall(Echo.SAY,
                CallOptions.DEFAULT.withDeadlineAfter(2, TimeUnit.SECONDS)), Echo.say("java", 0));
            calls.add(new Call(at, true, reply.get(5, TimeUnit.SECONDS).path("served_by").asText(), 0, ""));
          } catch (ExecutionException e) {
            Status s = Status.fromThrowable(e.getCause());
            calls.add(new Call(at, false, "", s.getCode().value(), String.valueOf(s.getDescription())));
          } catch (TimeoutException e) {
            reply.cancel(true);
            calls.add(new Call(at, false, "", -2, "no outcome 5 s after a call with a 2 s deadline"));
          } catch (InterruptedException e) {
            return;
          } catch (RuntimeException e) { // a failure too, not a calling thread that ends unseen
            calls.add(new Call(at, false, "", -1, e.toString()));
          }
          try {
            Thread.sleep(intervalMs);
          } catch (InterruptedException e) {
            return;
          }
        }
      }, "xds-caller-" + service);
      thread.setDaemon(true);
      thread.start();
    }

    @Override
    public String name() {
      return "grpc-java";
    }

    /**
     * The calling thread's state, its CPU time (a thread that spins uses it, one that waits does not) and its stack,
     * then every other thread of this JVM inside grpc-java (its timer, which fires the deadlines, and the executors
     * and event loops its xDS client and load balancers run on): a clean-clone suite saw this client make no call at
     * all, not even a failed one past its 2 s deadline, for 28 s after it reconnected to a restarted muster xds.
     */
    @Override
    public String state() {
      java.lang.management.ThreadMXBean threads = java.lang.management.ManagementFactory.getThreadMXBean();
      StringBuilder b = new StringBuilder("grpc-java's calling thread: ").append(thread.getState());
      long cpu = threads.isThreadCpuTimeSupported() ? threads.getThreadCpuTime(thread.getId()) : -1;
      b.append(", ").append(cpu < 0 ? "CPU time unknown" : (cpu / 1_000_000) + " ms of CPU so far");
      for (StackTraceElement e : thread.getStackTrace()) {
        b.append("\n    at ").append(e);
      }
      for (java.lang.management.ThreadInfo t : threads.dumpAllThreads(false, false)) {
        boolean grpc = java.util.Arrays.stream(t.getStackTrace()).anyMatch(e -> e.getClassName().startsWith("io.grpc"));
        if (!grpc || t.getThreadId() == thread.getId()) {
          continue;
        }
        b.append("\nthread \"").append(t.getThreadName()).append("\": ").append(t.getThreadState());
        java.util.Arrays.stream(t.getStackTrace()).limit(20).forEach(e -> b.append("\n    at ").append(e));
      }
      return b.toString();
    }

    @Override
    public List<Call> calls() {
      return List.copyOf(calls);
    }

    @Override
    public void close() {
      stop = true;
      thread.interrupt();
      channel.shutdownNow();
      try {
        thread.join(5000);
        channel.awaitTermination(5, TimeUnit.SECONDS);
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
      }
    }
  }

  /** Node: {@code node xds-client.js}, one JSON line per call on its stdout; stopped by pid at close. */
  static final class NodeCaller implements Caller {
    private static final ObjectMapper JSON = new ObjectMapper();
    private final ChildProcess process;

    NodeCaller(String service, String bootstrap, long intervalMs) {
      Path dir = Path.of(System.getProperty("muster.node.client"));
      if (!Files.isDirectory(dir.resolve("node_modules/@grpc/grpc-js-xds"))) {
        throw new AssertionError("Node's xDS client is not installed in " + dir + ": run the tests with ./muster"
            + " test, which runs npm ci there");
      }
      process = ChildProcess.start("node-xds-" + service, List.of("env", "GRPC_XDS_BOOTSTRAP_CONFIG=" + bootstrap,
          "node", dir.resolve("xds-client.js").toString(), "--target", "xds:///" + service, "--interval-ms",
          Long.toString(intervalMs)));
    }

    @Override
    public String name() {
      return "node";
    }

    @Override
    public List<Call> calls() {
      List<Call> out = new ArrayList<>();
      for (String line : process.stdout()) {
        if (!line.startsWith("{")) {
          continue;
        }
        try {
          JsonNode n = JSON.readTree(line);
          out.add(new Call(n.path("at").asLong(), n.path("ok").asBoolean(), n.path("served_by").asText(""),
              n.path("code").asInt(0), n.path("error").asText("")));
        } catch (IOException e) {
          // a line cut short by a read while the process writes it: the next read has it whole
        }
      }
      return out;
    }

    @Override
    public void close() {
      process.close();
    }
  }

  @SuppressWarnings("unchecked")
  static java.util.Map<String, ?> parse(String json) {
    try {
      return new ObjectMapper().readValue(json, java.util.Map.class);
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  /** Writes {@code text} to {@code file}. */
  static void write(Path file, String text) {
    try {
      Files.writeString(file, text);
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }
}
