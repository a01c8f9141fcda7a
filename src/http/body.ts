// Request bodies are JSON, read with a hard cap: a body larger than the route's limit
// is refused with 413 as soon as the cap is passed, whether or not it declared its
// length, so a client cannot make us buffer without bound.
import { formatProblem } from "../lib/validation.ts";
import { ApiError } from "./errors.ts";
import { payloadTooLarge } from "./refusals.ts";
import { bodyTextProblem } from "./text-checks.ts";

/**
 * `declaredBytes`: the Content-Length, when the request has one. A large body announced
 * within the limit is read straight into one buffer of its size (no list of chunks, no
 * copy of them joined): E11 bodies carry whole messages.
 */
export async function readBodyCapped(
  req: Request,
  limitBytes: number,
  declaredBytes = Number.NaN,
  /** The config key that sets the limit, named in the 413; null for a fixed limit. */
  limitKey: string | null = null,
): Promise<Uint8Array> {
  if (!req.body) return new Uint8Array(0);
  const reader = req.body.getReader();
  let into =
    Number.isSafeInteger(declaredBytes) && declaredBytes >= ONE_BUFFER_FROM_BYTES && declaredBytes <= limitBytes
      ? Buffer.allocUnsafe(declaredBytes)
      : null;
  const chunks: Uint8Array[] = [];
  let total = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    if (total + value.byteLength > limitBytes) {
      await reader.cancel().catch(() => {});
      throw new ApiError(413, payloadTooLarge(limitBytes, limitKey));
    }
    if (into && total + value.byteLength > into.length) {
      // More than announced (the server lets no such body through): gather chunks instead.
      chunks.push(into.subarray(0, total));
      into = null;
    }
    if (into) into.set(value, total);
    else chunks.push(value);
    total += value.byteLength;
  }
  return into ? into.subarray(0, total) : Buffer.concat(chunks);
}

/** Bodies announced at least this large are read into one buffer of their size. */
const ONE_BUFFER_FROM_BYTES = 64 * 1024;

const [QUOTE, BACKSLASH, OPEN_BRACKET, OPEN_BRACE, CLOSE_BRACKET, CLOSE_BRACE] = [0x22, 0x5c, 0x5b, 0x7b, 0x5d, 0x7d];

/**
 * How deep the arrays and objects of a JSON text nest, stopping as soon as it passes
 * `limit`. Read from the bytes before JSON.parse: a megabyte of "[[[[..." nests 500,000
 * deep, and parsing and validating that held the event loop for seconds. The structural
 * characters are ASCII, and no byte of a multi-byte UTF-8 character is ASCII, so bytes do.
 */
export function jsonDepthExceeds(bytes: Uint8Array, limit: number): boolean {
  let depth = 0;
  for (let i = 0; i < bytes.length; i++) {
    const b = bytes[i]!;
    if (b === QUOTE) {
      i = closingQuote(bytes, i);
      if (i < 0) return false; // unterminated: JSON.parse says so
    } else if (b === OPEN_BRACKET || b === OPEN_BRACE) {
      if (++depth > limit) return true;
    } else if (b === CLOSE_BRACKET || b === CLOSE_BRACE) depth--;
  }
  return false;
}

// Strings are most of a large body (Base64 attachments): jump over them with the native
// indexOf instead of looking at each byte. A quote ends the string unless an odd number
// of backslashes stands before it.
function closingQuote(bytes: Uint8Array, openAt: number): number {
  let at = openAt;
  for (;;) {
    at = bytes.indexOf(QUOTE, at + 1);
    if (at < 0) return -1;
    let backslashes = 0;
    while (bytes[at - 1 - backslashes] === BACKSLASH) backslashes++;
    if (backslashes % 2 === 0) return at;
  }
}

/** Parses a JSON body; empty is null (the schema then says what was expected). */
export function parseJsonBody(bytes: Uint8Array, maxDepth: number): unknown {
  if (bytes.byteLength === 0) return null;
  if (jsonDepthExceeds(bytes, maxDepth))
    throw new ApiError(422, `body nests arrays and objects more than ${maxDepth} deep (http.max_json_depth)`);
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
