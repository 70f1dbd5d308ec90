/**
 * The api end to end on a Cartesi Rollups v2 stack (ROLLUPS=v2): the devnode as a v2 node (v2 contracts,
 * JSON-RPC, v2 inspect), the api reading and writing through it (the suite: test/api/e2e-suite.ts).
 */
import { apiEndToEndSuite } from "./e2e-suite.ts";

apiEndToEndSuite({ replicas: 1, rollups: "v2" });
