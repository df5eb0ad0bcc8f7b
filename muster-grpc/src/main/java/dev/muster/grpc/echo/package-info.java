/** The demo service of {@code muster grpc-serve}, the tests and the lab. */
package dev.muster.grpc.echo;
