// No NUL (U+0000) in the URL's parameters: a path segment or a query parameter holding one
// is refused with 422 naming it, before any route reads it, on both engines alike.
// PostgreSQL's text cannot hold NUL: a lookup by such an ID failed there with 500, while
// SQLite answered 404. Other control characters are left to each route's own schema: a
// parameter is looked up or matched, never stored, and the file name in an attachment's
// URL is the received message's, whatever it holds (only its NUL is replaced, stored-text.ts).
import { NUL } from "../lib/stored-text.ts";

type Parameters = Record<string, unknown> | undefined;

export const NUL_RULE = "must not contain NUL (\\u0000)";

/** "path addressId: must not contain NUL (\u0000)", or null. */
export function parameterTextProblem(params: Parameters, query: Parameters): string | null {
  for (const [where, values] of [
    ["path", params],
    ["query", query],
  ] as const) {
    for (const [name, value] of Object.entries(values ?? {})) {
      // The name is shown unless it holds the NUL itself.
      if (name.includes(NUL)) return `${where} parameter names ${NUL_RULE}`;
      // A parameter given twice is an array.
      for (const v of Array.isArray(value) ? value : [value])
        if (typeof v === "string" && v.includes(NUL)) return `${where} ${name}: ${NUL_RULE}`;
    }
  }
  return null;
}
