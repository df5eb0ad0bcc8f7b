package dev.muster.testing;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;

/** What Linux's {@code /proc/PID/stat} says of a process: the tests' view of its state, group and session. */
record ProcStat(String state, long processGroup, long session) {

  /** Reads {@code /proc/PID/stat}; the fields after the command's name are state, ppid, pgrp and session. */
  static ProcStat of(long pid) throws IOException {
    String stat = Files.readString(Path.of("/proc", Long.toString(pid), "stat"));
    String[] fields = stat.substring(stat.lastIndexOf(')') + 2).split(" ", 5);
    return new ProcStat(fields[0], Long.parseLong(fields[2]), Long.parseLong(fields[3]));
  }

  /** Whether the process is stopped by a signal (state T). */
  boolean stopped() {
    return state.equals("T");
  }
}
