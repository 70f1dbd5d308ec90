/** The api end to end against one api process (the suite: test/api/e2e-suite.ts). */
import { apiEndToEndSuite } from "./e2e-suite.ts";

apiEndToEndSuite({ replicas: 1 });
