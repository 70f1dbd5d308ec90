// SPDX-License-Identifier: AGPL-3.0-only
/** The provider's decrypted answer, framed with the project's own HTTP/1.1 parser (common/http1.ts). */
import { bodyFraming, Http1Error, Http1Parser } from "../common/http1.ts";

export interface HttpResponse {
  status: number;
  body: string;
}

/** The api's own cap on a provider's body (DECISIONS.md section 5). */
const MAX_BODY_BYTES = 1024 * 1024;

export function parseHttpResponse(bytes: Buffer): HttpResponse {
  let found: HttpResponse | undefined;
  const parser = new Http1Parser({
    maxBodyBytes: MAX_BODY_BYTES,
    framing: (head) => bodyFraming(head.headers, MAX_BODY_BYTES, "close"),
    message(head, body) {
      const status = /^HTTP\/1\.[01] (\d{3})/.exec(head.startLine);
      if (!status) throw new Http1Error(`not an HTTP/1.x status line: ${head.startLine.slice(0, 40)}`);
      found ??= { status: Number(status[1]), body: body.toString("utf8") };
    },
  });
  parser.push(bytes);
  parser.end();
  if (found === undefined) throw new Http1Error("the provider's answer ended before a whole HTTP message");
  return found;
}
