// Text that enters the store from a request body. Two rules hold for every string of
// every body, before the route's schema sees it: it is well-formed UTF-16 (JSON's \uD800
// escape can carry half a character, which no database, header or browser takes back
// intact), and it holds no control character but tab, line feed and carriage return
// (NUL truncates C strings, ESC drives terminals that read logs). Fields that are one
// line (names, labels, addresses, subjects) also refuse tab, CR and LF: see ONE_LINE.
import { t } from "elysia";
import type { Problem } from "../lib/validation.ts";

/** JSON Schema pattern of a one-line field: no C0 control character, no DEL. */
export const ONE_LINE_PATTERN = "^[^\\x00-\\x1f\\x7f]*$";

/** A one-line string field: a name, a label, an address, a subject, a URL. */
export const oneLine = (maxLength: number, options: { description?: string; minLength?: number } = {}) =>
  t.String({
    ...options,
    maxLength,
    pattern: ONE_LINE_PATTERN,
    errorMessage: `must be one line of at most ${maxLength} characters, without control characters`,
  });

/** Said by a union holding one-line strings, whose own message is the one users see. */
export const ONE_LINE_RULE = "one line each, without control characters";

// C0 controls other than \t \n \r, and DEL.
const FORBIDDEN_CONTROL = /[\x00-\x08\x0b\x0c\x0e-\x1f\x7f]/;

/** What is wrong with one string, or null. */
export function textRule(value: string): string | null {
  if (!value.isWellFormed()) return "is not well-formed Unicode (it holds half of a surrogate pair)";
  if (FORBIDDEN_CONTROL.test(value)) return "must not contain control characters";
  return null;
}

/**
 * The first string of a parsed JSON body (value or key) that breaks a rule, with the path
 * of the field that holds it ("attachments[0].file_name"). Walks with an explicit stack:
 * a body is untrusted and may nest deeper than the call stack allows.
 */
export function bodyTextProblem(body: unknown): Problem | null {
  const stack: { value: unknown; path: string }[] = [{ value: body, path: "" }];
  while (stack.length > 0) {
    const { value, path } = stack.pop()!;
    if (typeof value === "string") {
      const rule = textRule(value);
      if (rule) return { path, message: rule };
    } else if (Array.isArray(value)) {
      for (let i = value.length - 1; i >= 0; i--) stack.push({ value: value[i], path: `${path}[${i}]` });
    } else if (value !== null && typeof value === "object") {
      const entries = Object.entries(value);
      for (let i = entries.length - 1; i >= 0; i--) {
        const [key, inner] = entries[i]!;
        const keyPath = path === "" ? key : `${path}.${key}`;
        const keyRule = textRule(key);
        // The key itself is not shown: it is the broken text.
        if (keyRule) return { path: path === "" ? "body" : path, message: `a key ${keyRule}` };
        stack.push({ value: inner, path: keyPath });
      }
    }
  }
  return null;
}
