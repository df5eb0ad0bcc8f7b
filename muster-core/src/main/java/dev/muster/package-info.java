/** Muster's model and consumer-side logic; no etcd types here. */
package dev.muster;
