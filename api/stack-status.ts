/**
 * What the stack's supervisor says of its pieces (DATA_DIR/stack-status.json, written by
 * scripts/lib/stack-supervisor.ts at each start, exit and restart): served in `GET /api/core/status` and as
 * `stack_piece_restarts` on `GET /metrics`, so an operator sees a piece that keeps dying without reading logs.
 * Outside a stack (an api run on its own) there is no file, and nothing is served.
 */
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { z } from "zod";

const pieceSchema = z.object({
  piece: z.string(),
  running: z.boolean(),
  pid: z.number().int().nullable(),
  restarts: z.number().int().nonnegative(),
  lastExit: z.object({ reason: z.string(), at: z.number() }).nullable(),
});

export type StackPiece = z.infer<typeof pieceSchema>;

const fileSchema = z.object({ pieces: z.array(pieceSchema) });

/** The pieces as the supervisor last wrote them; null without a stack, or when the file cannot be read. */
export function readStackStatus(dataDir: string): StackPiece[] | null {
  let text: string;
  try {
    text = readFileSync(join(dataDir, "stack-status.json"), "utf8");
  } catch {
    return null;
  }
  try {
    const parsed = fileSchema.safeParse(JSON.parse(text));
    return parsed.success ? parsed.data.pieces : null;
  } catch {
    // Caught mid-write by another process: the next read has it whole.
    return null;
  }
}
