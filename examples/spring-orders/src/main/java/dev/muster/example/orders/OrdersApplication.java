package dev.muster.example.orders;

import dev.muster.spring.MusterRegistration;
import java.util.Map;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.boot.SpringApplication;
import org.springframework.boot.autoconfigure.SpringBootApplication;
import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.PathVariable;
import org.springframework.web.bind.annotation.RequestParam;
import org.springframework.web.bind.annotation.RestController;

/**
 * A provider: {@code GET /orders/{id}[?delayMs=N]} answers (after the delay) with the order and the instance that
 * served it. muster-spring-boot-starter registers it as {@code orders} once Tomcat is up, with the port Tomcat
 * bound, and on SIGTERM publishes DRAINING, drains, lets requests in flight finish, then revokes its lease.
 */
@SpringBootApplication
@RestController
public class OrdersApplication {
  private final ObjectProvider<MusterRegistration> registration; // absent with muster.enabled=false

  public OrdersApplication(ObjectProvider<MusterRegistration> registration) {
    this.registration = registration;
  }

  public static void main(String[] args) {
    SpringApplication.run(OrdersApplication.class, args);
  }

  @GetMapping("/orders/{id}")
  public Map<String, Object> order(@PathVariable("id") String id, @RequestParam(name = "delayMs", defaultValue = "0") long delayMs)
      throws InterruptedException {
    if (delayMs > 0) {
      Thread.sleep(Math.min(delayMs, 10_000));
    }
    MusterRegistration r = registration.getIfAvailable();
    String servedBy = r == null || r.getInstanceId() == null ? "unregistered" : r.getInstanceId();
    return Map.of("order", id, "status", "shipped", "served_by", servedBy);
  }
}
