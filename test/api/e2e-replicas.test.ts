/**
 * The api end to end through the load balancer: two api replicas behind haproxy, rate limits and login
 * nonces shared in Redis, each replica with its own wallet (the suite: test/api/e2e-suite.ts).
 */
import { apiEndToEndSuite } from "./e2e-suite.ts";

apiEndToEndSuite({ replicas: 2 });
