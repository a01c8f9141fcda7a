// Request bodies are JSON, read with a hard cap: a body larger than the route's limit
// is refused with 413 as soon as the cap is passed, whether or not it declared its
// length, so a client cannot make us buffer without bound.
import { formatProblem } from "../lib/validation.ts";
import { ApiError } from "./errors.ts";
import { bodyTextProblem } from "./text-checks.ts";

export async function readBodyCapped(req: Request, limitBytes: number): Promise<Uint8Array> {
  if (!req.body) return new Uint8Array(0);
  const chunks: Uint8Array[] = [];
  let total = 0;
  const reader = req.body.getReader();
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    total += value.byteLength;
    if (total > limitBytes) {
      await reader.cancel().catch(() => {});
      throw new ApiError(413);
    }
    chunks.push(value);
  }
  return Buffer.concat(chunks);
}

/** Parses a JSON body; empty is null (the schema then says what was expected). */
export function parseJsonBody(bytes: Uint8Array): unknown {
  if (bytes.byteLength === 0) return null;
  let text: string;
  try {
    text = new TextDecoder("utf-8", { fatal: true }).decode(bytes);
  } catch {
    throw new ApiError(422, "body is not valid UTF-8");
  }
  let body: unknown;
  try {
    body = JSON.parse(text);
  } catch {
    throw new ApiError(422, "body is not valid JSON");
  }
  const problem = bodyTextProblem(body);
  if (problem) throw new ApiError(422, formatProblem(problem));
  return body;
}
