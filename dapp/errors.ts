import type { z } from "zod";
import { CodedError } from "../common/errors.ts";
import type { DappErrorCode, DappErrorReport } from "../common/wire.ts";

/** Why an advance input was rejected; becomes the report `{"error": {"code", "message"}}`. */
export class InputRejection extends CodedError<DappErrorCode> {
  override readonly name = "InputRejection";
}

/** Why an inspect query was rejected; its message is the exact text sent to /exception. */
export class QueryRejection extends Error {
  override readonly name = "QueryRejection";
}

export function rejectionReport(code: DappErrorCode, message: string): DappErrorReport {
  return { error: { code, message } };
}

/** `path: message` of a zod issue, so a rejection names the offending field. */
export function describeIssue(issue: z.core.$ZodIssue): string {
  const path = issue.path.map(String).join(".");
  return path ? `${path}: ${issue.message}` : issue.message;
}
