package dev.muster.testing;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;

/** What Linux's {@code /proc/PID/stat} says of a process: the tests' view of its state, group and session. */
record ProcStat(String state, long processGroup, long session) {

  /** Reads {@code /proc/PID/stat}; the fields after the command's name are state, ppid, pgrp and session. */
  static ProcStat of(long pid) throws IOException {
    return parse(Files.readString(Path.of("/proc", Long.toString(pid), "stat")));
  }

  /** Each thread's {@code /proc/PID/task/TID/stat}, by thread id (a thread that exits meanwhile is left out). */
  static java.util.Map<Long, ProcStat> threads(long pid) throws IOException {
    java.util.Map<Long, ProcStat> out = new java.util.TreeMap<>();
    try (var tasks = Files.list(Path.of("/proc", Long.toString(pid), "task"))) {
      for (Path task : (Iterable<Path>) tasks::iterator) {
        long tid = Long.parseLong(task.getFileName().toString());
        try {
          out.put(tid, parse(Files.readString(task.resolve("stat"))));
        } catch (java.nio.file.NoSuchFileException gone) {
          // exited between the listing and the read
        }
      }
    }
    return out;
  }

  private static ProcStat parse(String stat) {
    String[] fields = stat.substring(stat.lastIndexOf(')') + 2).split(" ", 5);
    return new ProcStat(fields[0], Long.parseLong(fields[2]), Long.parseLong(fields[3]));
  }

  /** Whether the process is stopped by a signal (state T). */
  boolean stopped() {
    return state.equals("T");
  }
}
