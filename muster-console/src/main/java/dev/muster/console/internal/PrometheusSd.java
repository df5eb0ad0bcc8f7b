package dev.muster.console.internal;

import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.muster.registry.Instance;
import dev.muster.registry.InstanceState;
import java.util.ArrayList;
import java.util.Collection;
import java.util.Comparator;
import java.util.List;

/**
 * {@code GET /api/prometheus-sd}: every UP instance of the services the console watches, in the format of
 * Prometheus's HTTP service discovery ({@code http_sd_configs}): a JSON array of target groups, here one per
 * instance, {@code {"targets": ["ADDRESS:PORT"], "labels": {"__meta_muster_service": ..., ...}}}. The labels are
 * meta labels (Prometheus drops them after relabelling unless a {@code relabel_configs} rule keeps one): namespace,
 * service, instance (the id), version, zone, region, weight, and tags as {@code ,a,b,} (Consul's form, so a regex
 * can match {@code .*,a,.*}). Instance metadata is never a label: Prometheus shows discovered labels to anyone who
 * can open its page. DRAINING and STARTING instances are left out; a stale cache's last set is listed.
 */
final class PrometheusSd {
  private PrometheusSd() {}

  /** The target groups of {@code services}, those of {@code namespace} only when it is not null. */
  static ArrayNode targets(Collection<ConsoleServices.Watched> services, String namespace) {
    List<Instance> up = new ArrayList<>();
    for (ConsoleServices.Watched w : services) {
      if (namespace == null || namespace.equals(w.namespace())) {
        for (Instance i : w.cache().current().instances()) {
          if (i.state() == InstanceState.UP) {
            up.add(i);
          }
        }
      }
    }
    up.sort(Comparator.comparing((Instance i) -> i.namespace()).thenComparing(i -> i.service())
        .thenComparing(i -> i.id()));
    ArrayNode groups = Views.JSON.createArrayNode();
    for (Instance i : up) {
      ObjectNode g = groups.addObject();
      String host = i.address().indexOf(':') >= 0 ? "[" + i.address() + "]" : i.address();
      g.putArray("targets").add(host + ":" + i.port());
      ObjectNode labels = g.putObject("labels");
      labels.put("__meta_muster_namespace", i.namespace());
      labels.put("__meta_muster_service", i.service());
      labels.put("__meta_muster_instance", i.id());
      labels.put("__meta_muster_version", i.version());
      labels.put("__meta_muster_zone", i.zone() == null ? "" : i.zone());
      labels.put("__meta_muster_region", i.region() == null ? "" : i.region());
      labels.put("__meta_muster_weight", Integer.toString(i.weight()));
      labels.put("__meta_muster_tags", i.tags().isEmpty() ? "" : "," + String.join(",", i.tags()) + ",");
    }
    return groups;
  }
}
