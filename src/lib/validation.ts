// Turns TypeBox validation errors into the sentences users read, in the same form for
// the config file ("accounts[0].id: must be 16 lowercase hex") and for API bodies
// ("nickname: must be a string or null").
import { DefaultErrorFunction, SetErrorFunction, ValueErrorType, type ValueError } from "@sinclair/typebox/errors";

// Schemas may carry an `errorMessage`: the rule in words, used for every failure of that key.
SetErrorFunction((param) => {
  const custom = (param.schema as { errorMessage?: unknown }).errorMessage;
  return typeof custom === "string" ? custom : DefaultErrorFunction(param);
});

/** JSON pointer "/accounts/0/id" → "accounts[0].id". */
export function pointerToKeyPath(pointer: string): string {
  let out = "";
  for (const raw of pointer.split("/").slice(1)) {
    const part = raw.replace(/~1/g, "/").replace(/~0/g, "~");
    if (/^\d+$/.test(part)) out += `[${part}]`;
    else out += out === "" ? part : `.${part}`;
  }
  return out;
}

export interface Problem {
  path: string;
  message: string;
}

/** `noun` names what the keys are to the reader: "field" in API bodies, "key" in the config file. */
export function describeValueError(error: ValueError, noun = "field"): Problem {
  const path = pointerToKeyPath(error.path);
  switch (error.type) {
    case ValueErrorType.ObjectAdditionalProperties:
      return { path, message: `unknown ${noun}` };
    case ValueErrorType.ObjectRequiredProperty:
      return { path, message: "is required" };
    default:
      return { path, message: plainMessage(error) };
  }
}

// TypeBox's own wording ("Expected string") reads as jargon; say what the key must be.
function plainMessage(error: ValueError): string {
  if ((error.schema as { errorMessage?: unknown }).errorMessage) return error.message;
  const m = /^Expected (.+)$/.exec(error.message);
  if (m) return `must be ${m[1]!.replace(/^union value$/, "one of the allowed types")}`;
  return error.message.charAt(0).toLowerCase() + error.message.slice(1);
}

/** First problem per key path, in the order found. */
export function describeValueErrors(errors: Iterable<ValueError>, noun = "field"): Problem[] {
  const seen = new Map<string, Problem>();
  for (const e of errors) {
    const p = describeValueError(e, noun);
    if (!seen.has(p.path)) seen.set(p.path, p);
  }
  return [...seen.values()];
}

export const formatProblem = (p: Problem): string => (p.path ? `${p.path}: ${p.message}` : p.message);
