/**
 * Calling providers over HTTP through the endpoint cache: {@link dev.muster.http.MusterHttp} on the JDK's
 * {@code java.net.http.HttpClient}, with balancing, local ejection and budgeted retries from
 * {@code dev.muster.call}.
 */
package dev.muster.http;
