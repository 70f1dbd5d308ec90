/**
 * The api end to end on a Rollups v2 stack whose epochs a Quorum of three members claims
 * (`npm start -- --rollups v2 --quorum 3`): the whole suite (test/api/e2e-suite.ts) passes with every
 * proof verified against a root the Quorum accepted, and every read served by the members, who are readers.
 */
import { apiEndToEndSuite } from "./e2e-suite.ts";

apiEndToEndSuite({ replicas: 1, rollups: "v2", quorum: 3 });
