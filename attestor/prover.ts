// SPDX-License-Identifier: AGPL-3.0-only
/** The prover process the api forks and `npm run prove` starts: the honest plan (attestor/prover-core.ts). */
import { honestPlan, serveProver } from "./prover-core.ts";

serveProver(honestPlan);
