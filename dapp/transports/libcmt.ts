/**
 * The dapp on libcmt (@cartesi/rollup), the transport of Cartesi's current application template: no
 * rollup HTTP server, the requests and outputs go through libcmt itself. Inside the Cartesi machine that
 * is the machine's device (the ioctl driver); on a host it is libcmt's mock driver, which takes its
 * requests from the files named in CMT_INPUTS and writes every output, report, exception and outputs
 * Merkle root to files beside them (what `npm run replay -- --libcmt` reads).
 *
 * The handlers are the dispatcher's, unchanged: this file only turns libcmt's requests into the
 * dispatcher's and the dispatcher's outputs into libcmt's calls.
 */
import { existsSync } from "node:fs";
import { constants } from "node:os";
import type { AdvanceRequest as LibcmtAdvance, Rollup } from "@cartesi/rollup";
import type { Address, Hex } from "viem";
import { bytesToHex } from "../../common/hex.ts";
import type { DappDatabase } from "../db/open.ts";
import { createDispatcher, type AdvanceRequest, type Dispatcher, type RollupOutputs } from "../dispatch.ts";

export interface CreateLibcmtDappOptions {
  db: DappDatabase;
  admins: readonly Address[];
  log?: (line: string) => void;
  /** Writes the log lines still waiting: called before each yield, because the machine stops in there. */
  flushLog?: () => void;
  /** DAPP_CHAIN_ID and DAPP_ADDRESS; unused in practice, since every libcmt advance names its chain and application. */
  application?: { chainId: number; address: Address };
  /** DAPP_OUTPUTS_TREE_FILE (dapp/config.ts): the outputs tree carried across host sessions. */
  outputsTreeFile?: string;
}

export interface LibcmtDapp {
  dispatcher: Dispatcher;
  /** `"ioctl"` in the machine, `"mock"` on a host: fixed when the addon was built. */
  driver: "ioctl" | "mock";
  /**
   * Serves requests until there are no more: in the machine never (finish only returns with the next
   * request); on the host when the mock's inputs run out. Rejects when libcmt fails.
   */
  run(): Promise<void>;
  close(): void;
}

/** The negative errnos of cmt_rollup_finish when the mock has run out of inputs. */
const MOCK_SESSION_ENDS = new Set([-constants.errno.ENODATA, -constants.errno.ENOSYS]);

export class LibcmtTransportError extends Error {
  override readonly name = "LibcmtTransportError";
}

/** Loads the addon only now, so a dapp on the rollup HTTP server never loads it (the v1 image carries it unused). */
export async function createLibcmtDapp(options: CreateLibcmtDappOptions): Promise<LibcmtDapp> {
  const libcmt = await import("@cartesi/rollup");
  const log = options.log ?? (() => {});
  const flushLog = options.flushLog ?? (() => {});
  const rollup: Rollup = new libcmt.Rollup();
  const treeFile = options.outputsTreeFile;
  if (treeFile !== undefined && existsSync(treeFile)) rollup.loadMerkle(treeFile);

  // Set when the request being served raised an exception: it then ends unaccepted.
  let raised = false;
  const outputs: RollupOutputs = {
    notice: async (payload: Hex) => rollup.emitNotice(payload),
    report: async (payload: Hex) => rollup.emitReport(payload),
    // In the machine an exception never returns (the request ends there); the mock goes on.
    exception: async (payload: Hex) => {
      raised = true;
      rollup.emitException(payload);
    },
  };
  const dispatcher = createDispatcher({ db: options.db, admins: options.admins, outputs, log, ...(options.application === undefined ? {} : { application: options.application }) });

  /** The mock's normal end: no input left after an accepted (ENODATA) or a rejected (ENOSYS) request. */
  function isEndOfMockSession(error: unknown): boolean {
    return libcmt.driver === "mock" && error instanceof libcmt.RollupError && error.syscall === "cmt_rollup_finish" && MOCK_SESSION_ENDS.has(error.errno);
  }

  async function run(): Promise<void> {
    let accept = true;
    let previousRejected = false;
    for (;;) {
      flushLog();
      let request: ReturnType<Rollup["finish"]>;
      try {
        request = rollup.finish({ accept });
      } catch (error) {
        if (isEndOfMockSession(error)) return;
        if (libcmt.driver === "mock" && previousRejected) {
          // The mock does not revert the machine after a rejection, so it cannot serve what follows one.
          throw new LibcmtTransportError(
            "libcmt's mock driver cannot go on after a rejected request (it has no machine to revert): end each host session at a rejection or an exception",
            { cause: error },
          );
        }
        throw error;
      }
      raised = false;
      if (request.type === "advance") {
        accept = (await dispatcher.advance(advanceRequestOf(request))) === "accept" && !raised;
        if (accept && treeFile !== undefined) rollup.saveMerkle(treeFile);
      } else {
        await dispatcher.inspect({ payload: bytesToHex(request.payload) });
        accept = !raised;
      }
      previousRejected = !accept;
    }
  }

  return { dispatcher, driver: libcmt.driver, run, close: () => rollup.close() };
}

/**
 * libcmt's advance as the dispatcher reads it: the v2 metadata the rollup HTTP server of machine-guest-tools
 * writes (lower-case addresses, prev_randao as 32 bytes), so both transports give the handlers the same input.
 */
function advanceRequestOf(request: LibcmtAdvance): AdvanceRequest {
  return {
    metadata: {
      chain_id: Number(request.chainId),
      app_contract: request.appContract.toLowerCase(),
      msg_sender: request.msgSender.toLowerCase(),
      block_number: Number(request.blockNumber),
      block_timestamp: Number(request.blockTimestamp),
      prev_randao: `0x${request.prevRandao.toString(16).padStart(64, "0")}`,
      input_index: Number(request.index),
    },
    payload: bytesToHex(request.payload),
  };
}
