package dev.muster.testing;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.io.UncheckedIOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.net.SocketException;
import java.net.URI;
import java.time.Duration;
import java.util.Arrays;
import java.util.Objects;
import java.util.Set;
import java.util.concurrent.ArrayBlockingQueue;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * A TCP proxy on a loopback port that forwards to one loopback target and can be told, at any moment, to
 * misbehave the way networks do:
 *
 * <ul>
 *   <li>{@link #pass()}: forward everything (the default);
 *   <li>{@link #cut()}: close every connection and refuse new ones, as when a peer process dies. The port stays
 *       reserved (nobody else can take it while cut): a new connection is accepted and at once reset (RST), which a
 *       client sees as a refused or reset connection;
 *   <li>{@link #blackhole()}: keep connections open and accept new ones but forward nothing in either direction,
 *       a half-open peer. Bytes are held, not dropped: on {@link #pass()} they flow again, as TCP would deliver
 *       them after a partition heals;
 *   <li>{@link #latency(Duration)}: forward every chunk that much later than it arrived.
 * </ul>
 *
 * <p>Design: one acceptor thread; per connection and direction a reader thread stamps each chunk with its
 * arrival time and queues it, and a writer thread forwards it when the mode allows and its delay has passed.
 * The mode is one volatile field; threads waiting in {@link Mode#BLACKHOLE} wait on this object's monitor,
 * which {@link #setMode} notifies. The bounded queues give back-pressure, as a real socket buffer would.
 *
 * <p>Thread-safe: the control methods may be called from any thread. Threads are daemons named
 * {@code muster-proxy-PORT-...}.
 */
public final class FaultProxy implements AutoCloseable {
  /** What the proxy does with traffic right now. */
  public enum Mode { PASS, CUT, BLACKHOLE, LATENCY }

  private static final int CHUNK = 64 * 1024;
  private static final int QUEUE_CHUNKS = 64;

  private final InetSocketAddress target;
  private final Set<Connection> connections = ConcurrentHashMap.newKeySet();
  private final AtomicInteger connectionIds = new AtomicInteger();
  private final AtomicInteger accepted = new AtomicInteger();
  private volatile Mode mode = Mode.PASS;
  private volatile long latencyNanos;
  private volatile boolean closed;
  private ServerSocket server;

  private FaultProxy(InetSocketAddress target) {
    this.target = target;
  }

  /** Starts a proxy on a free loopback port forwarding to {@code target} (an {@code http://127.0.0.1:P} URL). */
  public static FaultProxy to(URI target) {
    return to(target.getHost(), target.getPort());
  }

  /** Starts a proxy on a free loopback port forwarding to {@code host:port}, which must be a loopback address. */
  public static FaultProxy to(String host, int port) {
    InetSocketAddress address = new InetSocketAddress(host, port);
    if (address.isUnresolved() || !address.getAddress().isLoopbackAddress()) {
      throw new IllegalArgumentException("fault proxy target " + host + ":" + port
          + " is not a loopback address: the proxy only forwards to 127.0.0.1/::1");
    }
    FaultProxy proxy = new FaultProxy(address);
    proxy.listen(0);
    return proxy;
  }

  /** The loopback port clients connect to. */
  public synchronized int port() {
    return server.getLocalPort(); // bound in to(), kept until close(): also while cut
  }

  /** {@code http://127.0.0.1:PORT}, for a client's endpoint list. */
  public URI uri() {
    return URI.create("http://127.0.0.1:" + port());
  }

  public Mode mode() {
    return mode;
  }

  /** Connections currently open through the proxy. */
  public int openConnections() {
    return connections.size();
  }

  /** Connections accepted since the proxy started. */
  public int acceptedConnections() {
    return accepted.get();
  }

  /** Forward everything again. */
  public void pass() {
    setMode(Mode.PASS, 0);
  }

  /** Close every connection and refuse new ones until the next {@link #pass()} or other mode. */
  public void cut() {
    setMode(Mode.CUT, 0);
  }

  /** Keep connections open, accept new ones, forward nothing. */
  public void blackhole() {
    setMode(Mode.BLACKHOLE, 0);
  }

  /** Forward every chunk {@code delay} after it arrived. */
  public void latency(Duration delay) {
    Objects.requireNonNull(delay, "delay");
    if (delay.isNegative()) {
      throw new IllegalArgumentException("latency is " + delay + ": use zero or more");
    }
    setMode(Mode.LATENCY, delay.toNanos());
  }

  @Override
  public void close() {
    synchronized (this) {
      closed = true;
      closeServer();
      notifyAll();
    }
    connections.forEach(Connection::close);
  }

  @Override
  public String toString() {
    return "FaultProxy[127.0.0.1:" + port() + " -> " + target + ", " + mode + "]";
  }

  private void setMode(Mode next, long delayNanos) {
    synchronized (this) {
      if (closed) {
        throw new IllegalStateException("fault proxy on port " + port() + " is closed");
      }
      latencyNanos = delayNanos;
      mode = next;
      notifyAll();
    }
    if (next == Mode.CUT) {
      connections.forEach(Connection::close);
    }
  }

  private synchronized void listen(int onPort) {
    try {
      ServerSocket s = new ServerSocket();
      s.setReuseAddress(true);
      s.bind(new InetSocketAddress(InetAddress.getLoopbackAddress(), onPort));
      server = s;
    } catch (IOException e) {
      throw new UncheckedIOException("fault proxy cannot listen on 127.0.0.1:" + onPort + ": " + e.getMessage(), e);
    }
    ServerSocket s = server;
    Thread acceptor = new Thread(() -> acceptLoop(s), "muster-proxy-" + s.getLocalPort() + "-accept");
    acceptor.setDaemon(true);
    acceptor.start();
  }

  private void closeServer() {
    if (server != null) {
      try {
        server.close();
      } catch (IOException e) {
        // closing anyway
      }
    }
  }

  private void acceptLoop(ServerSocket s) {
    while (!s.isClosed()) {
      try {
        Socket client = s.accept();
        if (mode == Mode.CUT) {
          client.setSoLinger(true, 0); // reset at once: refused, without giving up the port
          client.close();
          continue;
        }
        accepted.incrementAndGet();
        Connection c = new Connection(client, connectionIds.incrementAndGet());
        connections.add(c);
        c.start();
      } catch (IOException e) {
        return; // closed by cut() or close()
      }
    }
  }

  /** Waits while the proxy is black-holed; returns false when the connection should end. */
  private boolean awaitFlowing(Connection c) {
    synchronized (this) {
      while (mode == Mode.BLACKHOLE && !closed && !c.closed) {
        try {
          wait();
        } catch (InterruptedException e) {
          Thread.currentThread().interrupt();
          return false;
        }
      }
      return !closed && !c.closed && mode != Mode.CUT;
    }
  }

  private record Chunk(byte[] bytes, long arrivedNanos) {
    static final Chunk EOF = new Chunk(new byte[0], 0);
  }

  /** One proxied connection: a client socket, an upstream socket, and two directions. */
  private final class Connection {
    final Socket client;
    final int id;
    volatile Socket upstream;
    volatile boolean closed;
    final AtomicInteger directionsDone = new AtomicInteger();
    final Set<BlockingQueue<Chunk>> queues = ConcurrentHashMap.newKeySet();

    Connection(Socket client, int id) {
      this.client = client;
      this.id = id;
    }

    void start() {
      Thread t = new Thread(this::connectAndPump, name("connect"));
      t.setDaemon(true);
      t.start();
    }

    private String name(String what) {
      return "muster-proxy-" + port() + "-c" + id + "-" + what;
    }

    private void connectAndPump() {
      if (!awaitFlowing(this)) { // a black-holed proxy accepts but does not reach the target yet
        close();
        return;
      }
      try {
        Socket up = new Socket();
        up.connect(target, 2000);
        up.setTcpNoDelay(true);
        client.setTcpNoDelay(true);
        upstream = up;
        if (closed) {
          up.close();
          return;
        }
        direction(client, up, "c2u");
        direction(up, client, "u2c");
      } catch (IOException e) {
        close(); // target down: the client sees its connection closed, as it would through a real path
      }
    }

    private void direction(Socket from, Socket to, String label) throws IOException {
      BlockingQueue<Chunk> queue = new ArrayBlockingQueue<>(QUEUE_CHUNKS);
      queues.add(queue);
      InputStream in = from.getInputStream();
      OutputStream out = to.getOutputStream();
      Thread reader = new Thread(() -> read(in, queue), name(label + "-read"));
      Thread writer = new Thread(() -> write(queue, out, to), name(label + "-write"));
      reader.setDaemon(true);
      writer.setDaemon(true);
      reader.start();
      writer.start();
    }

    private void read(InputStream in, BlockingQueue<Chunk> queue) {
      byte[] buffer = new byte[CHUNK];
      try {
        while (awaitFlowing(this)) {
          int n = in.read(buffer);
          if (n < 0) {
            enqueue(queue, Chunk.EOF);
            return;
          }
          enqueue(queue, new Chunk(Arrays.copyOf(buffer, n), System.nanoTime()));
        }
      } catch (IOException e) {
        close();
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        close();
      }
    }

    /** Blocks while the queue is full (back-pressure), but gives up once the connection closes. */
    private void enqueue(BlockingQueue<Chunk> queue, Chunk chunk) throws InterruptedException {
      while (!closed && !queue.offer(chunk, 100, java.util.concurrent.TimeUnit.MILLISECONDS)) {
        // the writer is behind (latency, blackhole): wait for room
      }
    }

    private void write(BlockingQueue<Chunk> queue, OutputStream out, Socket to) {
      try {
        while (!closed) {
          Chunk chunk = queue.take();
          if (closed) {
            return;
          }
          if (chunk == Chunk.EOF) {
            to.shutdownOutput();
            if (directionsDone.incrementAndGet() == 2) {
              close();
            }
            return;
          }
          if (!awaitFlowing(this)) {
            return;
          }
          long due = chunk.arrivedNanos() + latencyNanos;
          long wait = due - System.nanoTime();
          if (wait > 0) {
            Thread.sleep(wait / 1_000_000, (int) (wait % 1_000_000));
          }
          if (!awaitFlowing(this)) { // the mode may have changed while we slept
            return;
          }
          out.write(chunk.bytes());
          out.flush();
        }
      } catch (SocketException e) {
        close();
      } catch (IOException e) {
        close();
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        close();
      }
    }

    void close() {
      if (closed) {
        return;
      }
      closed = true;
      connections.remove(this);
      closeQuietly(client);
      closeQuietly(upstream);
      queues.forEach(q -> q.offer(Chunk.EOF)); // wake writers blocked on an empty queue
      synchronized (FaultProxy.this) {
        FaultProxy.this.notifyAll(); // wake this connection's threads waiting in blackhole
      }
    }
  }

  private static void closeQuietly(Socket s) {
    if (s != null) {
      try {
        s.close();
      } catch (IOException e) {
        // closing anyway
      }
    }
  }
}
