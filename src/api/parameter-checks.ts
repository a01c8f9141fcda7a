// The URL's parameters follow the rules of body text (text-checks.ts): a path segment or a
// query parameter holding a control character (NUL above all: PostgreSQL's text cannot hold
// it, and the lookup failed with 500 there while SQLite answered 404) is refused with 422
// naming it, before any route reads it, on both engines alike.
import { textRule } from "./text-checks.ts";

type Parameters = Record<string, unknown> | undefined;

/** "path addressId: must not contain control characters", or null when every parameter is text we store. */
export function parameterTextProblem(params: Parameters, query: Parameters): string | null {
  for (const [where, values] of [["path", params], ["query", query]] as const) {
    for (const [name, value] of Object.entries(values ?? {})) {
      // A parameter given twice is an array; its name is ours to show only when it is text we take.
      for (const v of Array.isArray(value) ? value : [value]) {
        if (typeof v !== "string") continue;
        const rule = textRule(v);
        if (rule) return textRule(name) ? `${where} parameter names ${rule}` : `${where} ${name}: ${rule}`;
      }
    }
  }
  return null;
}
