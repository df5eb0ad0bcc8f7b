/**
 * {@code muster sim ttl} (issue 18): seed 003's Monte Carlo of the TTL trade-off (detection delay against false
 * removals from lognormal pauses) beside the model of what Muster's registrar and etcd 3.4 do, and a real run that
 * checks the second model with SIGSTOPped provider processes. The models are pure Java on seeded streams; only
 * {@link dev.muster.lab.sim.TtlValidation} starts processes. The design and every assumption: {@code docs/sim-ttl.md}.
 */
package dev.muster.lab.sim;
