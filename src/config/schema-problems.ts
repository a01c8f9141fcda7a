// The problems the schema finds in a config file, in the words check-config prints: an
// unknown key with the key it was most likely meant to be, and a TLS mode's missing keys
// along with the rest (the rules that span several keys otherwise wait for a valid file).
import { ValueErrorType, type ValueError } from "@sinclair/typebox/errors";
import { Value } from "@sinclair/typebox/value";
import { describeValueErrors, pointerToKeyPath, type Problem } from "../lib/validation.ts";
import { suggestKey } from "./did-you-mean.ts";
import { ConfigSchema } from "./schema.ts";
import { tlsRequiredKeyProblems } from "./tls-required.ts";

/** `withDefaults`: the parsed file with the schema's defaults filled in. [] when it fits. */
export function schemaProblems(withDefaults: unknown): Problem[] {
  const errors = [...Value.Errors(ConfigSchema, withDefaults)];
  if (errors.length === 0) return [];
  const problems = describeValueErrors(errors, "key").map((p) => withSuggestion(p, errors));
  const named = new Set(problems.map((p) => p.path));
  const tls = tlsRequiredKeyProblems((withDefaults as { tls?: unknown } | null)?.tls).filter((p) => !named.has(p.path));
  return [...problems, ...tls];
}

/** "unknown key" with the key of the same table it was most likely meant to be. */
function withSuggestion(problem: Problem, errors: ValueError[]): Problem {
  const error = errors.find((e) => e.type === ValueErrorType.ObjectAdditionalProperties && pointerToKeyPath(e.path) === problem.path);
  if (!error) return problem;
  const known = Object.keys((error.schema as { properties?: object }).properties ?? {});
  const unknown = error.path.split("/").pop()!.replace(/~1/g, "/").replace(/~0/g, "~");
  const meant = suggestKey(unknown, known);
  return meant ? { ...problem, message: `${problem.message}; did you mean "${meant}"?` } : problem;
}
