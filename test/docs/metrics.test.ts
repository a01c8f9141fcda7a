// docs/operations.md's Monitoring section names every metric a real Postroom serves, with its
// type and every label, and names none that it does not serve.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { readFileSync } from "node:fs";
import { hashSecret } from "../../src/auth/secrets.ts";
import { startTestApp, type TestApp } from "../helpers/app.ts";
import { scrapeMetrics } from "../helpers/metrics.ts";

const METRICS_TOKEN = "pr_metrics_token_for_tests";
const operations = readFileSync(new URL("../../docs/operations.md", import.meta.url), "utf8");
const monitoring = operations.slice(operations.indexOf("\n## Monitoring\n"), operations.indexOf("\n## Troubleshooting\n"));

/** The rows of the section's metric tables: the `names` of the first cell, and the rest of the row. */
const rows = [...monitoring.matchAll(/^\| (`[^|]+) \|(.*)\|$/gm)].map((m) => ({
  names: [...m[1]!.matchAll(/`([a-z0-9_]+)`/g)].map((n) => n[1]!),
  rest: m[2]!,
}));
const documented = new Map(rows.flatMap((r) => r.names.map((n) => [n, r.rest] as const)));

let t: TestApp;
/** Families of a real scrape: type and the label names of their series. */
const served = new Map<string, { type: string; labels: Set<string> }>();

beforeAll(async () => {
  t = await startTestApp({ http: `metrics_token = "${hashSecret(METRICS_TOKEN)}"` });
  // A request first, so the labelled HTTP series exist.
  await fetch(`http://127.0.0.1:${t.app.httpPort}/healthz`);
  const scrape = await scrapeMetrics(t.app.httpPort!, METRICS_TOKEN);
  for (const [name, type] of scrape.families) served.set(name, { type, labels: new Set() });
  for (const line of scrape.text.split("\n")) {
    const m = /^([a-z0-9_]+?)(?:_bucket|_sum|_count)?\{(.*)\} /.exec(line);
    const family = m && (served.get(m[1]!) ?? served.get(line.split("{")[0]!));
    if (family) for (const [, label] of m![2]!.matchAll(/([a-z_]+)="/g)) if (label !== "le") family.labels.add(label!);
  }
});
afterAll(() => t.stop());

describe("docs/operations.md, Monitoring", () => {
  test("names every metric served", () => {
    expect(served.size).toBeGreaterThan(30);
    expect([...served.keys()].filter((name) => !documented.has(name))).toEqual([]);
  });

  test("names no metric that is not served (a renamed or removed one)", () => {
    const names = [...documented.keys()].filter((n) => /^(postroom|process|nodejs)_/.test(n));
    expect(names.length).toBeGreaterThan(30);
    expect(names.filter((name) => !served.has(name))).toEqual([]);
  });

  test("gives each postroom_ metric its type and every label", () => {
    const wrong = [...served]
      .filter(([name]) => name.startsWith("postroom_"))
      .filter(([name, { type, labels }]) => {
        const row = documented.get(name)!;
        return !row.trimStart().startsWith(type) || [...labels].some((label) => !row.includes(`\`${label}\``));
      })
      .map(([name]) => name);
    expect(wrong).toEqual([]);
  });
});
