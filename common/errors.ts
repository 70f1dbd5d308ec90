/**
 * One error shape for the whole project: a literal code, a human message and optional structured
 * details. Each piece (dapp, api) narrows `Code` to its own union and maps it to the wire in one place.
 */
export class CodedError<Code extends string = string> extends Error {
  override readonly name: string = "CodedError";
  readonly code: Code;
  readonly details: Readonly<Record<string, unknown>> | undefined;

  constructor(code: Code, message: string, details?: Record<string, unknown>, options?: { cause?: unknown }) {
    super(message, options);
    this.code = code;
    this.details = details;
  }
}

/** Message of an unknown thrown value, without assuming it is an Error. */
export function messageOf(error: unknown): string {
  if (error instanceof Error) return error.message;
  return String(error);
}
