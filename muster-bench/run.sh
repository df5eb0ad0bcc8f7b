#!/usr/bin/env bash
# Runs Muster's JMH benchmarks alone (./muster bench runs them too, with the end-to-end rows) with quick defaults (one fork, 2 x 1 s warmup, 3 x 1 s measurement, -prof gc for
# the allocation rate). The figures go to the console and to target/jmh-result.txt, the machine-readable ones to
# target/jmh-result.csv. Benchmarks print figures and never fail on a number (STYLE.md rule 10).
#
#   muster-bench/run.sh                          # everything, quick
#   muster-bench/run.sh ApplyBenchmark -p size=10000
#   muster-bench/run.sh -f 3 -i 10 -r 2s         # a longer, steadier run
#   muster-bench/run.sh -h                       # every JMH option
#
# Extra arguments go to JMH as they are. An option you pass replaces its default (JMH refuses most options
# twice); pass any -prof to replace -prof gc. Give each option and its value as separate words.
#
# Build the jar first: cd /work/main && mvn -B -q package -pl muster-bench -am -DskipTests
set -euo pipefail

here="$(cd "$(dirname "$0")" && pwd)"
jar="$here/target/muster-bench.jar"
if [[ ! -f "$jar" ]]; then
  echo "run.sh: $jar is missing; build it: cd $(dirname "$here") && mvn -B -q package -pl muster-bench -am -DskipTests" >&2
  exit 2
fi

defaults=(
  -f 1
  -wi 2
  -w 1s
  -i 3
  -r 1s
  -prof gc
  -rf csv
  -rff "$here/target/jmh-result.csv"
)

given() {
  local option="$1" arg
  for arg in "${extra[@]}"; do
    [[ "$arg" == "$option" ]] && return 0
  done
  return 1
}

extra=("$@")
args=()
for ((i = 0; i < ${#defaults[@]}; i += 2)); do
  if ! given "${defaults[i]}"; then
    args+=("${defaults[i]}" "${defaults[i + 1]}")
  fi
done

java -cp "$jar" org.openjdk.jmh.Main "${args[@]}" "${extra[@]}" | tee "$here/target/jmh-result.txt"
