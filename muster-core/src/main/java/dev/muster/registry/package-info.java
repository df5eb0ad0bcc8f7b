/**
 * The registry model: names, instances, the etcd key layout and the JSON value codec (SPEC §2). Pure Java, no
 * etcd types; every type here is an immutable value or a stateless helper and is safe to share between threads.
 * Implementation helpers are package-private in this package.
 */
package dev.muster.registry;
