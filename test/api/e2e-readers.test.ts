/**
 * The api end to end with its reads served by two readers (`npm start -- --readers 2`: validators on the
 * stack's chain replaying the inputs with their own dapps) and two api replicas behind haproxy sharing the
 * write mark in Redis: the whole suite (test/api/e2e-suite.ts) passes while the node's inspect receives no
 * request from the api, and a write followed at once by a read through another replica sees the write.
 */
import { apiEndToEndSuite } from "./e2e-suite.ts";

apiEndToEndSuite({ replicas: 2, readers: 2 });
