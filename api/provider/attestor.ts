/**
 * Provider values proven by the TLS attestors (DECISIONS.md sections 14 and 16, docs/provider.md), for the
 * claims the api makes itself: its pool of prover processes (common/prover-pool.ts), the claim's
 * attestors at once, failures as ApiErrors.
 */
import type { ChildProcess } from "node:child_process";
import { failureCode, ProverPool as Processes, spawnProver, type ProverSettings } from "../../common/prover-pool.ts";
import type { ProveFailure, ProveRequest, ProveSuccess } from "../../common/prover-protocol.ts";
import type { ProofMode } from "../../common/tls-claim.ts";
import { ApiError } from "../errors.ts";

export interface AttestorSettings extends ProverSettings {
  /** The attestors' WebSockets, `ws://host:port/ws`: a schema that requires k attestors uses the first k. */
  urls: string[];
  mode: ProofMode;
}

export class ProverPool {
  private readonly processes: Processes;

  constructor(
    readonly settings: AttestorSettings,
    spawn: (settings: ProverSettings) => ChildProcess = spawnProver,
    /** Told each claim's mode, outcome and time (the api's metrics). */
    private readonly observe: (mode: ProofMode, outcome: "ok" | "failed", seconds: number) => void = () => {},
  ) {
    this.processes = new Processes(settings, spawn, "the api is shutting down");
  }

  /**
   * Proves through each of `attestorUrls` (in separate TLS sessions, at once) that the provider's value at
   * `field` lies in one of the definition's bins. Throws ApiError: ZKTLS_PROOF_FAILED with a `reason` for
   * everything on the attestors' path, and the provider's own codes (PROVIDER_AUTH_FAILED,
   * PROVIDER_UNAVAILABLE, PROVIDER_INVALID_RESPONSE) when the provider answered badly or not at all.
   */
  async prove(request: Omit<ProveRequest, "id" | "mode" | "attestorUrl"> & { mode?: ProofMode }, attestorUrls: readonly string[]): Promise<ProveSuccess[]> {
    const mode = request.mode ?? this.settings.mode;
    const results = await Promise.all(
      attestorUrls.map(async (attestorUrl) => {
        const started = performance.now();
        const result = await this.processes.run({ ...request, mode, attestorUrl });
        this.observe(mode, result.ok ? "ok" : "failed", (performance.now() - started) / 1000);
        return result;
      }),
    );
    const failed = results.find((r): r is ProveFailure => !r.ok);
    if (failed !== undefined) {
      const { code, message, details } = failureCode(failed, request.url);
      throw new ApiError(code, message, details);
    }
    return results as ProveSuccess[];
  }

  /** Ends every prover; claims under way fail with ZKTLS_PROOF_FAILED. */
  close(): Promise<void> {
    return this.processes.close();
  }

  get size(): number {
    return this.processes.size;
  }
}

export function proofFailed(reason: string): ApiError {
  return new ApiError("ZKTLS_PROOF_FAILED", `zkTLS proof failed: ${reason}`, { reason });
}
