// E11's send_at and metadata (issue 34, API.md section 10) as pure checks: a body's values
// become the time its recipients are first attempted and the metadata stored with it, or an
// InputProblem naming the field and the rule.
import type { Problem } from "../../lib/validation.ts";
import { METADATA_KEY } from "../queue/metadata-search.ts";

/** Most metadata values of one message (API.md section 10). */
export const MAX_METADATA_ENTRIES = 20;
/** Longest metadata value, in characters. */
export const MAX_METADATA_VALUE_CHARS = 500;

// A date and time with a zone: without one the time would be the server's guess.
const ISO_TIME = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2}(\.\d{1,9})?)?(Z|[+-]\d{2}:?\d{2})$/i;

const DAY_MS = 86_400_000;

/** outbound.max_send_ahead's default (API.md section 10: at most 30 days ahead). */
export const DEFAULT_MAX_SEND_AHEAD_MS = 30 * DAY_MS;

/** How a limit in milliseconds reads in a sentence: days when it is whole days. */
const spanOf = (ms: number): string => (ms % DAY_MS === 0 ? `${ms / DAY_MS} days` : `${Math.round(ms / 1000)} seconds`);

/**
 * When the message's recipients are first attempted: null without send_at; a time in the
 * past is now. A Problem when it is not an ISO 8601 time with a zone, or lies more than
 * `maxAheadMs` ahead of `nowMs`.
 */
export function sendAtOf(value: string | undefined, nowMs: number, maxAheadMs: number): { ms: number | null } | Problem {
  if (value === undefined) return { ms: null };
  const ms = ISO_TIME.test(value) ? Date.parse(value) : Number.NaN;
  if (Number.isNaN(ms)) return { path: "send_at", message: "must be an ISO 8601 time with a zone, such as 2026-12-01T09:00:00Z" };
  if (ms - nowMs > maxAheadMs)
    return {
      path: "send_at",
      message: `is more than ${spanOf(maxAheadMs)} ahead (outbound.max_send_ahead); send it later, or schedule it nearer`,
    };
  return { ms: Math.max(ms, nowMs) };
}

/** The message's metadata, checked: string values, named keys, bounded sizes, no CR, LF or NUL. */
export function metadataOf(value: unknown): { metadata: Record<string, string> } | Problem {
  if (value === undefined) return { metadata: {} };
  const fail = (message: string): Problem => ({ path: "metadata", message });
  if (value === null || typeof value !== "object" || Array.isArray(value)) return fail("must be an object of strings");
  const entries = Object.entries(value);
  if (entries.length > MAX_METADATA_ENTRIES) return fail(`holds at most ${MAX_METADATA_ENTRIES} values, not ${entries.length}`);
  // No prototype: a key such as __proto__ is a key like any other.
  const metadata: Record<string, string> = Object.create(null);
  for (const [key, v] of entries) {
    if (!METADATA_KEY.test(key))
      return fail(`key ${JSON.stringify(key.slice(0, 50))} must be 1 to 40 letters, digits or underscores ([A-Za-z0-9_])`);
    if (typeof v !== "string") return fail(`value of ${key} must be a string`);
    if (v.length > MAX_METADATA_VALUE_CHARS) return fail(`value of ${key} is longer than ${MAX_METADATA_VALUE_CHARS} characters`);
    if (/[\r\n\u0000]/.test(v)) return fail(`value of ${key} must not contain line breaks or NUL`);
    metadata[key] = v;
  }
  return { metadata };
}

export const isProblem = (x: object): x is Problem => "path" in x && "message" in x;
