// Named schemas for the OpenAPI document: every schema given a `title` where it is
// defined (Address, Error, InboundPayload...) becomes one entry of components/schemas and
// a $ref wherever it is used, so clients generated from the document get named types.
import { unwrapSchema } from "@elysiajs/openapi/openapi";
import { deepStrictEqual } from "node:assert";

type Json = null | boolean | number | string | Json[] | { [key: string]: Json };

/** A TypeBox schema as the library writes the others (unions of literals as enum, nullable as a type list). */
export const asOpenApi = (schema: unknown): unknown => unwrapSchema(schema as never, undefined, "input", "3.1.0");

/**
 * Elysia's t.Integer and t.Number also take numeric strings (for query parameters), and
 * are written as anyOf [a string of format integer or numeric, with default 0; the number].
 * On the wire of a JSON body or answer only the number is right, and in a query string the
 * number's schema says the same: keep the number.
 */
export function withPlainNumbers(node: Json): Json {
  if (Array.isArray(node)) return node.map(withPlainNumbers);
  if (node === null || typeof node !== "object") return node;
  const out: { [key: string]: Json } = {};
  for (const [k, v] of Object.entries(node)) out[k] = withPlainNumbers(v);
  const anyOf = out.anyOf;
  if (!Array.isArray(anyOf) || anyOf.length !== 2) return out;
  const isNumericString = (b: Json) =>
    typeof b === "object" && b !== null && !Array.isArray(b) && b.type === "string" && (b.format === "integer" || b.format === "numeric");
  const number = anyOf.find((b) => !isNumericString(b));
  if (!anyOf.some(isNumericString) || typeof number !== "object" || number === null || Array.isArray(number)) return out;
  const { anyOf: _, ...rest } = out;
  return { ...rest, ...number };
}

/** The document with its titled schemas under components/schemas; two different schemas with one title are a bug. */
export function withNamedSchemas<T extends Record<string, unknown>>(doc: T): T {
  const schemas: Record<string, Json> = {};
  const out: Record<string, unknown> = { ...doc };
  for (const section of ["paths", "webhooks"]) if (section in doc) out[section] = hoist(doc[section] as Json, schemas);
  const components = (doc.components ?? {}) as Record<string, unknown>;
  const sorted = Object.fromEntries(Object.entries(schemas).sort(([a], [b]) => a.localeCompare(b)));
  out.components = { ...components, schemas: { ...(components.schemas as object), ...sorted } };
  return out as T;
}

const isSchema = (node: { [key: string]: Json }): boolean =>
  ["type", "oneOf", "anyOf", "allOf", "properties", "patternProperties"].some((k) => k in node);

function hoist(node: Json, schemas: Record<string, Json>): Json {
  if (Array.isArray(node)) return node.map((n) => hoist(n, schemas));
  if (node === null || typeof node !== "object") return node;
  const out: { [key: string]: Json } = {};
  for (const [k, v] of Object.entries(node)) out[k] = hoist(v, schemas);
  const name = out.title;
  if (typeof name !== "string" || !isSchema(out)) return out;
  // A nullable titled schema (the library writes type: ["object", "null"]): the schema, or null.
  if (Array.isArray(out.type) && out.type.includes("null")) {
    const types = out.type.filter((t) => t !== "null");
    return { anyOf: [named(name, { ...out, type: types.length === 1 ? types[0]! : types }, schemas), { type: "null" }] };
  }
  return named(name, out, schemas);
}

function named(name: string, out: { [key: string]: Json }, schemas: Record<string, Json>): Json {
  const known = schemas[name];
  if (known !== undefined) {
    try {
      deepStrictEqual(out, known);
    } catch {
      throw new Error(`two different schemas are titled ${name}: give one of them another title`);
    }
  }
  schemas[name] = out;
  return { $ref: `#/components/schemas/${name}` };
}
