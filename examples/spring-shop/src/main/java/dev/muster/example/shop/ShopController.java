package dev.muster.example.shop;

import java.util.Map;
import org.springframework.core.ParameterizedTypeReference;
import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.PathVariable;
import org.springframework.web.bind.annotation.RequestParam;
import org.springframework.web.bind.annotation.RestController;
import org.springframework.web.client.RestClient;

/** {@code GET /buy/{id}[?delayMs=N]}: the order from {@code orders}, with the instance that served it. */
@RestController
class ShopController {
  private static final ParameterizedTypeReference<Map<String, Object>> JSON = new ParameterizedTypeReference<>() {};

  private final RestClient orders;

  ShopController(RestClient orders) {
    this.orders = orders;
  }

  @GetMapping("/buy/{id}")
  Map<String, Object> buy(@PathVariable("id") String id, @RequestParam(name = "delayMs", defaultValue = "0") long delayMs) {
    return orders.get().uri("/orders/{id}?delayMs={delay}", id, delayMs).retrieve().body(JSON);
  }
}
