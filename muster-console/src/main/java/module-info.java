/**
 * Muster's web console: {@link dev.muster.console.ConsoleServer} serves plain HTML/CSS/JS and one server-sent-events
 * stream per page, fed by endpoint caches and a few server-side etcd maintenance calls; the browser never talks to
 * etcd.
 */
module dev.muster.console {
  requires transitive dev.muster.etcd;
  requires com.fasterxml.jackson.databind;
  requires jdk.httpserver;
  requires static micrometer.core; // optional: only ConsoleServer.bindMeters needs it
  requires org.slf4j;

  exports dev.muster.console;
}
