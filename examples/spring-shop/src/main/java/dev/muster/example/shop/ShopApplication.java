package dev.muster.example.shop;

import org.springframework.boot.SpringApplication;
import org.springframework.boot.autoconfigure.SpringBootApplication;
import org.springframework.cloud.client.loadbalancer.LoadBalanced;
import org.springframework.context.annotation.Bean;
import org.springframework.web.client.RestClient;

/**
 * A consumer: {@link ShopController} calls {@code orders} through a {@code @LoadBalanced} {@code RestClient}:
 * {@code http://orders/...} is resolved by Muster's load balancer on the live set (power of two choices, zone
 * preference, ejection), and a failed GET is retried once on another instance within Muster's retry budget.
 */
@SpringBootApplication
public class ShopApplication {
  public static void main(String[] args) {
    SpringApplication.run(ShopApplication.class, args);
  }

  @Bean
  @LoadBalanced
  RestClient.Builder loadBalanced() {
    return RestClient.builder();
  }

  @Bean
  RestClient orders(@LoadBalanced RestClient.Builder builder) {
    return builder.baseUrl("http://orders").build();
  }
}
