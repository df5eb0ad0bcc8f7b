package dev.muster.xds;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.SerializationFeature;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.muster.InvalidInputException;
import dev.muster.registry.Names;
import java.util.Objects;
import java.util.UUID;
import java.util.regex.Pattern;

/**
 * The bootstrap a gRPC xDS client reads, as JSON: from the file {@code GRPC_XDS_BOOTSTRAP} names, or as the value of
 * {@code GRPC_XDS_BOOTSTRAP_CONFIG} (grpc-java, Go, C++ and Python; Node reads both too). One {@code xds_servers}
 * entry (this server, insecure channel credentials, {@code xds_v3}) and the {@code node}: its id and, when a zone is
 * given, its locality, which {@link XdsConfig#zonePriorities()} reads. Node's client needs both {@code node.id} and
 * {@code node.locality}, so the locality is always written (empty without a zone).
 *
 * @param server the xds server, {@code HOST:PORT}
 * @param nodeId this client's id, as the server logs it
 * @param zone this client's zone, or null for none
 * @param region this client's region, or null for none
 */
public record XdsBootstrap(String server, String nodeId, String zone, String region) {
  private static final Pattern HOST_PORT = Pattern.compile(
      "(\\[[0-9A-Fa-f:.]+\\]|[A-Za-z0-9]([A-Za-z0-9.-]{0,251}[A-Za-z0-9])?):[0-9]{1,5}");

  public XdsBootstrap {
    Objects.requireNonNull(server, "server");
    if (!HOST_PORT.matcher(server).matches()) {
      throw new InvalidInputException("server", server, "give the xds server as HOST:PORT, such as 127.0.0.1:18000");
    }
    int port = Integer.parseInt(server.substring(server.lastIndexOf(':') + 1));
    if (port < 1 || port > 65535) {
      throw new InvalidInputException("server", server, "use a port of 1-65535");
    }
    if (nodeId == null || nodeId.isBlank() || nodeId.length() > 256 || nodeId.chars().anyMatch(c -> c < 0x20)) {
      throw new InvalidInputException("nodeId", nodeId, "give 1-256 printable characters, such as orders-client-1");
    }
    if (zone != null) {
      Names.requireValid("zone", zone);
    }
    if (region != null) {
      Names.requireValid("region", region);
    }
  }

  /** A bootstrap for {@code server} with a random node id and no zone. */
  public static XdsBootstrap of(String server) {
    return new XdsBootstrap(server, "muster-" + UUID.randomUUID(), null, null);
  }

  public XdsBootstrap withNodeId(String id) {
    return new XdsBootstrap(server, id, zone, region);
  }

  public XdsBootstrap withZone(String zone) {
    return new XdsBootstrap(server, nodeId, zone, region);
  }

  public XdsBootstrap withRegion(String region) {
    return new XdsBootstrap(server, nodeId, zone, region);
  }

  /** The JSON, indented. */
  public String toJson() {
    ObjectMapper json = new ObjectMapper().enable(SerializationFeature.INDENT_OUTPUT);
    ObjectNode root = json.createObjectNode();
    ObjectNode xds = root.putArray("xds_servers").addObject();
    xds.put("server_uri", server);
    xds.putArray("channel_creds").addObject().put("type", "insecure");
    ArrayNode features = xds.putArray("server_features");
    features.add("xds_v3");
    ObjectNode node = root.putObject("node");
    node.put("id", nodeId);
    ObjectNode locality = node.putObject("locality");
    if (region != null) {
      locality.put("region", region);
    }
    if (zone != null) {
      locality.put("zone", zone);
    }
    try {
      return json.writeValueAsString(root);
    } catch (JsonProcessingException e) {
      throw new IllegalStateException("a tree of strings always serializes", e);
    }
  }
}
