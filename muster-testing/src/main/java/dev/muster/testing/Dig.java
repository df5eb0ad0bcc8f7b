package dev.muster.testing;

import java.net.InetSocketAddress;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Set;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * The real {@code dig} (Debian's {@code bind9-dnsutils}) run against a DNS server on loopback, its output parsed
 * into sections: a client no one here wrote. Stateless; each query is one {@code dig} process, stopped by pid
 * ({@link ChildProcess}) if it outlives its limit.
 */
public final class Dig {
  /** How to install dig. */
  public static final String INSTALL = "apt-get install -y bind9-dnsutils (./muster test installs it)";

  private static final Pattern HEADER = Pattern.compile(";; ->>HEADER<<- opcode: (\\S+), status: (\\S+), id: \\d+");
  private static final Pattern FLAGS = Pattern.compile(";; flags:([^;]*);");
  private static final Duration LIMIT = Duration.ofSeconds(20);

  private Dig() {}

  /** One resource record as dig prints it: owner, TTL, type and the rest (the data) as dig wrote it. */
  public record Rr(String name, long ttl, String type, String data) {}

  /** What dig printed: status, header flags, the three sections, and whether the reply came over TCP. */
  public record Answer(String opcode, String status, Set<String> flags, List<Rr> answer, List<Rr> authority,
      List<Rr> additional, boolean tcp, boolean retriedOverTcp, List<String> output) {
    public boolean truncated() {
      return flags.contains("tc");
    }

    /** The data of the answers of {@code type}. */
    public List<String> data(String type) {
      return answer.stream().filter(r -> r.type().equals(type)).map(Rr::data).toList();
    }
  }

  /** The path of dig, or an {@link IllegalStateException} saying how to install it. */
  public static String binary() {
    return Executables.find("dig").map(Path::toString)
        .orElseThrow(() -> new IllegalStateException("dig is not installed: " + INSTALL));
  }


  /**
   * {@code dig @HOST -p PORT NAME TYPE +norec +time=2 +tries=1 OPTIONS...}; options such as {@code +tcp},
   * {@code +ignore} (keep a truncated UDP reply), {@code +bufsize=512}, {@code +noedns}.
   */
  public static Answer query(InetSocketAddress server, String name, String type, String... options) {
    List<String> command = new ArrayList<>(List.of(binary(), "@" + server.getAddress().getHostAddress(), "-p",
        Integer.toString(server.getPort()), name, type, "+norec", "+time=2", "+tries=1"));
    command.addAll(Arrays.asList(options));
    try (ChildProcess dig = ChildProcess.start("dig", command)) {
      int code = dig.exitCode(LIMIT);
      List<String> out = dig.stdout();
      if (code != 0) {
        throw new IllegalStateException("dig exited " + code + ": " + String.join(" ", command) + "\n"
            + String.join("\n", out) + dig.stderrTail());
      }
      return parse(out);
    }
  }

  /** Parses dig's default output (the last reply, when dig retried over TCP). */
  public static Answer parse(List<String> out) {
    String opcode = null;
    String status = null;
    Set<String> flags = Set.of();
    List<Rr> answer = new ArrayList<>();
    List<Rr> authority = new ArrayList<>();
    List<Rr> additional = new ArrayList<>();
    List<Rr> section = null;
    boolean tcp = false;
    boolean retried = false;
    for (String line : out) {
      Matcher h = HEADER.matcher(line);
      if (line.startsWith(";; Truncated, retrying in TCP mode")) {
        retried = true;
      } else if (h.find()) {
        opcode = h.group(1);
        status = h.group(2);
        answer.clear();
        authority.clear();
        additional.clear();
        section = null;
      } else if (line.startsWith(";; flags:")) {
        Matcher f = FLAGS.matcher(line);
        flags = f.find() ? Set.of(f.group(1).trim().split("\\s+")) : Set.of();
      } else if (line.startsWith(";; ANSWER SECTION:")) {
        section = answer;
      } else if (line.startsWith(";; AUTHORITY SECTION:")) {
        section = authority;
      } else if (line.startsWith(";; ADDITIONAL SECTION:")) {
        section = additional;
      } else if (line.startsWith(";; SERVER:")) {
        tcp = line.contains("(TCP)");
      } else if (line.isBlank() || line.startsWith(";")) {
        section = line.isBlank() ? null : section;
      } else if (section != null) {
        String[] f = line.trim().split("\\s+", 5);
        if (f.length == 5) {
          section.add(new Rr(f[0], Long.parseLong(f[1]), f[3], f[4]));
        }
      }
    }
    if (status == null) {
      throw new IllegalStateException("dig printed no reply header:\n" + String.join("\n", out));
    }
    return new Answer(opcode, status, flags, List.copyOf(answer), List.copyOf(authority), List.copyOf(additional),
        tcp, retried, List.copyOf(out));
  }
}
