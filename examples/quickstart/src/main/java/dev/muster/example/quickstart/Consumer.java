package dev.muster.example.quickstart;

import dev.muster.call.CallResult;
import dev.muster.call.Idempotent;
import dev.muster.etcd.EtcdConfig;
import dev.muster.etcd.EtcdRegistry;
import dev.muster.http.MusterHttp;
import java.net.http.HttpResponse;
import java.util.ArrayList;
import java.util.List;

/**
 * A consumer: calls {@code GET /hello} on service {@code hello} a few times through Muster's cache, balancer and
 * retries, and prints each answer. The first call waits for the cache's first set.
 *
 * <pre>
 * java -p ... -m dev.muster.example.quickstart/dev.muster.example.quickstart.Consumer [ENDPOINTS] [CALLS]
 * </pre>
 */
public final class Consumer {
  private Consumer() {}

  /** Makes {@code calls} calls and returns the answers (or the failures) as lines. */
  public static List<String> call(String endpoints, int calls) {
    List<String> lines = new ArrayList<>();
    try (EtcdRegistry registry = EtcdRegistry.connect(EtcdConfig.of(endpoints));
        MusterHttp http = MusterHttp.builder(registry).build()) {
      for (int i = 0; i < calls; i++) {
        CallResult<HttpResponse<String>> r = http.get("hello", "/hello", Idempotent.YES).join();
        lines.add(r.ok() ? r.value().body().strip() : "failed: " + r);
      }
    }
    return lines;
  }

  public static void main(String[] args) {
    String endpoints = args.length > 0 ? args[0] : EtcdConfig.DEFAULT_ENDPOINT;
    int calls = args.length > 1 ? Integer.parseInt(args[1]) : 5;
    call(endpoints, calls).forEach(System.out::println);
  }
}
