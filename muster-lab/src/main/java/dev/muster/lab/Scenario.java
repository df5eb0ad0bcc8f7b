package dev.muster.lab;

/** One experiment of SPEC §6: what it reproduces, the seed's evidence, and how to run it. */
public interface Scenario {
  /** The name used on the command line and in output.txt. */
  String name();

  /** What the scenario shows, one line. */
  String shows();

  /** The seed's evidence to reproduce or beat (SPEC §6), one line. */
  String seed();

  /** Runs the scenario; throws (any exception) when it cannot run, returns a result that passed or failed. */
  ScenarioResult run(LabContext ctx) throws Exception;
}
