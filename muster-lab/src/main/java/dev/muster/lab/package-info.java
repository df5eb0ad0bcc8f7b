/**
 * The fault lab (SPEC §6): each {@link dev.muster.lab.Scenario} starts private etcd processes, provider and
 * consumer processes from Muster's own jar, inflicts a fault with real signals or the fault proxy, and computes its
 * figures from the JSON-lines logs the processes wrote. {@link dev.muster.lab.Lab} runs a selection, prints
 * progress and writes {@code output.txt}, {@code env.txt}, {@code LIMITS.md} and the raw logs.
 */
package dev.muster.lab;
