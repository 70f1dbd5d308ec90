/**
 * The balancer in front of api replicas (`npm start -- --api-replicas N`): Debian's haproxy, configured from
 * the stack's settings into DATA_DIR (docs/operations.md explains each line).
 */
import { join } from "node:path";
import { BALANCER_CHECK_HEADER } from "../../api/rate-limit.ts";
import type { StackSettings } from "./stack-pieces.ts";

/** haproxy's configuration for the replicas, written into DATA_DIR (docs/operations.md explains each line). */
export function balancerConfig(s: StackSettings): string {
  const replicas = s.replicas;
  if (replicas === undefined) throw new Error("no replicas");
  return [
    // No global maxconn: haproxy then sizes it from the file-descriptor limit it is given.
    "global",
    "defaults",
    "  mode http",
    "  timeout connect 2s",
    "  timeout client 65s",
    "  timeout server 65s",
    "  timeout http-keep-alive 60s",
    "  timeout tunnel 1h",
    // Only a connection that never reached a replica is retried, on another one: a request that reached a
    // replica may have been written, and sending it again could write it twice.
    "  retries 3",
    "  option redispatch",
    "  retry-on conn-failure",
    "frontend api",
    // Where the single api would listen (its HOST default): every interface.
    `  bind 0.0.0.0:${s.apiPort}`,
    // The client's address as the replicas see it (they trust this header): the client's own header only
    // when a trusted proxy in front of the balancer wrote it.
    replicas.trustForwarded ? "  option forwardfor if-none" : "  http-request set-header X-Forwarded-For %[src]",
    // Only the balancer's own checks may say they are checks (api/rate-limit.ts BALANCER_CHECK_HEADER).
    `  http-request del-header ${BALANCER_CHECK_HEADER}`,
    "  default_backend replicas",
    "backend replicas",
    "  balance roundrobin",
    "  option httpchk",
    `  http-check send meth GET uri /healthcheck hdr ${BALANCER_CHECK_HEADER} 1`,
    "  http-check expect status 200",
    ...replicas.ports.map((port, i) => `  server api-${i + 1} 127.0.0.1:${port} check inter 500 fall 2 rise 1`),
    "",
  ].join("\n");
}

export function balancerConfigPath(s: StackSettings): string {
  return join(s.dataDir, "haproxy.cfg");
}
