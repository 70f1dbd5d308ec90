/**
 * The api end to end on a Cartesi Rollups v2 stack with its reads served by two v2 readers (validators that
 * replay the v2 InputBox with their own dapps): the whole suite (test/api/e2e-suite.ts) passes while the
 * node's inspect receives no request from the api.
 */
import { apiEndToEndSuite } from "./e2e-suite.ts";

apiEndToEndSuite({ replicas: 1, readers: 2, rollups: "v2" });
