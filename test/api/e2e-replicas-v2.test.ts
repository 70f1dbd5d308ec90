/**
 * The api end to end through the load balancer on a Cartesi Rollups v2 stack: two api replicas behind
 * haproxy sharing their limits in Redis, each with its own wallet, writing to the v2 InputBox and reading
 * through the v2 node (the suite: test/api/e2e-suite.ts). Replicas lose nothing by choosing v2.
 */
import { apiEndToEndSuite } from "./e2e-suite.ts";

apiEndToEndSuite({ replicas: 2, rollups: "v2" });
