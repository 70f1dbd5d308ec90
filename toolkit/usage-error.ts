/**
 * The error a command throws for a bad argument or a missing precondition the user can fix (not root, a
 * bad flag): the runner (scripts/lib/cli.ts `runScript`) prints it as one line with the usage and exits 2,
 * no stack trace. Here, below scripts/ and bench/, so the toolkit's own steps (toolkit/riscv64.ts) can
 * throw it too.
 */
export class UsageError extends Error {
  override readonly name = "UsageError";
}
