package dev.muster.testing;

import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * An etcd release, {@code 3.5.30}: what a binary says of itself with {@code --version}. Tests of behaviour that
 * differs between etcd lines ask {@link #atLeast(int, int)} of {@link EtcdBinary#runningVersion()}.
 */
public record EtcdVersion(int major, int minor, int patch) implements Comparable<EtcdVersion> {
  private static final Pattern FORM = Pattern.compile("(\\d+)\\.(\\d+)\\.(\\d+)");

  public EtcdVersion {
    if (major < 0 || minor < 0 || patch < 0) {
      throw new IllegalArgumentException("an etcd version has no negative part: " + major + "." + minor + "." + patch);
    }
  }

  /** {@code 3.5.30} (anything after the third number, such as {@code -rc.1}, is ignored). */
  public static EtcdVersion parse(String text) {
    Matcher m = FORM.matcher(text == null ? "" : text.strip());
    if (!m.lookingAt()) {
      throw new IllegalArgumentException("not an etcd version: '" + text + "' (expected MAJOR.MINOR.PATCH, e.g. 3.5.30)");
    }
    return new EtcdVersion(Integer.parseInt(m.group(1)), Integer.parseInt(m.group(2)), Integer.parseInt(m.group(3)));
  }

  /** Whether this release is {@code major.minor} or later: {@code atLeast(3, 5)} for the 3.5 line and after. */
  public boolean atLeast(int major, int minor) {
    return this.major > major || (this.major == major && this.minor >= minor);
  }

  /** The line, {@code 3.5}. */
  public String line() {
    return major + "." + minor;
  }

  @Override
  public int compareTo(EtcdVersion o) {
    int c = Integer.compare(major, o.major);
    if (c == 0) {
      c = Integer.compare(minor, o.minor);
    }
    return c != 0 ? c : Integer.compare(patch, o.patch);
  }

  @Override
  public String toString() {
    return major + "." + minor + "." + patch;
  }
}
