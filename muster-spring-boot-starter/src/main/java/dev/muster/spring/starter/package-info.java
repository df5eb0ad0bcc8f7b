/**
 * Muster's Spring Boot starter: a dependency, not code. With it (and {@code spring-boot-starter-web}) on the class
 * path and {@code muster.endpoints} set, an application registers itself in etcd once its web server is up, discovers
 * the services it calls, and balances its {@code @LoadBalanced} clients on Muster's balancer.
 *
 * <p>This package holds no classes. It names the package of the starter's module ({@code Automatic-Module-Name}
 * {@code dev.muster.spring.starter}) and is the content of its sources jar, which every published library carries;
 * the Javadoc jar is made from {@code src/main/javadoc}, as javadoc documents no package without a class.
 */
package dev.muster.spring.starter;
