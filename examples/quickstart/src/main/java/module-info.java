/** The quickstart: reads only Muster's exported packages (and the JDK's HTTP server for the provider's endpoint). */
module dev.muster.example.quickstart {
  requires dev.muster.etcd;
  requires jdk.httpserver;
}
