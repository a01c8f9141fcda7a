// docs/api.md keeps up with the API: its list of operations and records is the one made
// from the OpenAPI snapshot (which test/api/openapi.test.ts keeps equal to what the server
// serves), and its error table names every status the API answers with. After an intended
// change of the API: UPDATE_SNAPSHOTS=1 bun test test/docs/api-operations.test.ts, then
// review the diff of docs/api.md.
import { describe, expect, test } from "bun:test";
import { readdirSync, readFileSync } from "node:fs";
import { GENERATED_BEGIN, GENERATED_END, generatedApiSection } from "./openapi-markdown.ts";

const API_MD = new URL("../../docs/api.md", import.meta.url);
const SNAPSHOT = new URL("../api/openapi.snapshot.json", import.meta.url);
const API_SRC = new URL("../../src/api/", import.meta.url);

const doc = JSON.parse(readFileSync(SNAPSHOT, "utf8"));

describe("docs/api.md", () => {
  test("lists the operations and records of the OpenAPI document", async () => {
    const text = readFileSync(API_MD, "utf8");
    const begin = text.indexOf(GENERATED_BEGIN);
    const end = text.indexOf(GENERATED_END);
    expect(begin).toBeGreaterThanOrEqual(0);
    expect(end).toBeGreaterThan(begin);
    const generated = generatedApiSection(doc);
    if (process.env.UPDATE_SNAPSHOTS === "1")
      await Bun.write(API_MD, text.slice(0, begin) + generated + text.slice(end + GENERATED_END.length));
    expect(text.slice(begin, end + GENERATED_END.length)).toBe(generated);
  });

  test("its error table has a row for every status the API answers with", () => {
    const text = readFileSync(API_MD, "utf8");
    const errors = text.slice(text.indexOf("## Errors"), text.indexOf("\n## ", text.indexOf("## Errors") + 1));
    const documented = new Set([...errors.matchAll(/^\| (\d{3}) \|/gm)].map((m) => m[1]!));
    const used = new Set<string>();
    // Every status an operation declares...
    for (const item of Object.values<Record<string, { responses?: Record<string, unknown> }>>(doc.paths)) {
      for (const op of Object.values(item)) for (const status of Object.keys(op.responses ?? {})) if (status >= "400") used.add(status);
    }
    // ...and every one the code answers with (errorResponse(n), new ApiError(n), the status texts).
    for (const name of readdirSync(API_SRC).filter((n) => n.endsWith(".ts"))) {
      const source = readFileSync(new URL(name, API_SRC), "utf8");
      for (const m of source.matchAll(/(?:errorResponse|ApiError)\((\d{3})\b/g)) used.add(m[1]!);
      if (name === "errors.ts") for (const m of source.matchAll(/^\s+(\d{3}): "/gm)) used.add(m[1]!);
    }
    expect(used.size).toBeGreaterThan(5);
    expect([...used].filter((s) => !documented.has(s)).sort()).toEqual([]);
  });
});
