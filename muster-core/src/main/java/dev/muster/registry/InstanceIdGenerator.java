package dev.muster.registry;

import java.net.InetAddress;
import java.net.UnknownHostException;
import java.security.SecureRandom;
import java.util.Locale;
import java.util.Objects;
import java.util.function.Supplier;
import java.util.random.RandomGenerator;

/**
 * Makes default instance ids {@code {host}-{port}-{6 random hex}} (SPEC §2; the seed used the container hostname
 * plus a short hash). The host name is turned into a DNS label: lower-cased, each run of characters outside
 * {@code [a-z0-9]} replaced by one '-', cut so the whole id fits in 63 characters, '-' trimmed from both ends, and
 * {@code instance} when nothing is left.
 *
 * <p>Thread-safe when the {@link RandomGenerator} is ({@link #system()} uses a {@link SecureRandom}); the host name
 * supplier is called on every {@link #next(int)}.
 */
public final class InstanceIdGenerator {
  static final String FALLBACK_HOST = "instance";

  private static final InstanceIdGenerator SYSTEM =
      new InstanceIdGenerator(new CachedHostName(), new SecureRandom());

  private final Supplier<String> hostName;
  private final RandomGenerator random;

  /**
   * @param hostName supplies the raw host name; it may return null or anything, it is sanitized
   * @param random source of the 24 random bits in each id
   */
  public InstanceIdGenerator(Supplier<String> hostName, RandomGenerator random) {
    this.hostName = Objects.requireNonNull(hostName, "hostName");
    this.random = Objects.requireNonNull(random, "random");
  }

  /**
   * The generator {@link Instance#of(String, String, int)} uses: the host name from {@code $HOSTNAME}, else from
   * {@link InetAddress#getLocalHost()}, looked up once; randomness from a {@link SecureRandom}.
   */
  public static InstanceIdGenerator system() {
    return SYSTEM;
  }

  /** A new id for an instance listening on {@code port}; always a valid {@linkplain Names name}. */
  public String next(int port) {
    String suffix = "-" + port + "-" + String.format("%06x", random.nextInt(1 << 24));
    return hostLabel(hostName.get(), Names.MAX_LENGTH - suffix.length()) + suffix;
  }

  /** {@code host} as a DNS label of at most {@code maxLength} characters; {@value #FALLBACK_HOST} if none is left. */
  static String hostLabel(String host, int maxLength) {
    String label = host == null ? "" : host.toLowerCase(Locale.ROOT).replaceAll("[^a-z0-9]+", "-");
    label = trimDashes(label);
    if (label.length() > maxLength) {
      label = trimDashes(label.substring(0, maxLength));
    }
    return label.isEmpty() ? FALLBACK_HOST : label;
  }

  private static String trimDashes(String s) {
    int start = 0;
    int end = s.length();
    while (start < end && s.charAt(start) == '-') {
      start++;
    }
    while (end > start && s.charAt(end - 1) == '-') {
      end--;
    }
    return s.substring(start, end);
  }

  /** Looks the host name up once, on first use, since {@code getLocalHost()} may resolve it through DNS. */
  private static final class CachedHostName implements Supplier<String> {
    private volatile String name;

    @Override
    public String get() {
      String result = name;
      if (result == null) {
        result = lookUp();
        name = result;
      }
      return result;
    }

    private static String lookUp() {
      String env = System.getenv("HOSTNAME");
      if (env != null && !env.isBlank()) {
        return env;
      }
      try {
        return InetAddress.getLocalHost().getHostName();
      } catch (UnknownHostException e) {
        return FALLBACK_HOST;
      }
    }
  }
}
