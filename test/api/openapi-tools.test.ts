// The served OpenAPI document passes the linters clients' tooling uses, and a client
// generated from it works: Spectral (oas ruleset, .spectral.yaml) and Redocly report no
// error; openapi-typescript's types for it type-check test/api/openapi-client/client.ts,
// which makes one typed call to every operation (openapi-fetch), and that client then
// calls every operation of a running Postroom. All local: no network.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { cpSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { hashSecret } from "../../src/auth/secrets.ts";
import { startTestApp, type TestApp } from "../helpers/app.ts";
import { ACCOUNT_A } from "../helpers/fixtures.ts";
import { tempDir } from "../helpers/tmp.ts";

const ROOT = new URL("../../", import.meta.url).pathname;
const BIN = join(ROOT, "node_modules/.bin");
const OPERATOR = "pr_operator_token_openapi_client";
const CLIENT = new URL("./openapi-client/client.ts", import.meta.url).pathname;

let t: TestApp;
let doc: Record<string, any>;
const dir = tempDir("postroom-openapi-");
const docFile = join(dir.path, "openapi.json");

/** Runs a tool of node_modules/.bin under Node, as its users would; stdout and the exit code. */
function run(tool: string, args: string[], cwd = ROOT): { code: number; out: string; err: string } {
  const p = Bun.spawnSync(["node", join(BIN, tool), ...args], {
    cwd,
    // No telemetry, no update check: the tests reach no network.
    env: { ...process.env, REDOCLY_TELEMETRY: "off", REDOCLY_SUPPRESS_UPDATE_NOTICE: "true", NO_COLOR: "1" },
  });
  return { code: p.exitCode, out: p.stdout.toString(), err: p.stderr.toString() };
}

beforeAll(async () => {
  t = await startTestApp({ extra: `[dashboard]\nadmin_tokens = ["${hashSecret(OPERATOR)}"]` });
  const res = await t.call("GET", "/api/v0.1/openapi.json");
  expect(res.status).toBe(200);
  doc = (await res.json()) as Record<string, any>;
  writeFileSync(docFile, JSON.stringify(doc));
});
afterAll(async () => {
  await t.stop();
  dir.remove();
});

describe("the served OpenAPI document", () => {
  test("Spectral's oas ruleset finds no error", () => {
    const r = run("spectral", ["lint", "--ruleset", join(ROOT, ".spectral.yaml"), "--format", "json", "--quiet", docFile]);
    const problems = JSON.parse(r.out || "[]") as { severity: number; code: string; message: string; path: string[] }[];
    const errors = problems.filter((p) => p.severity === 0).map((p) => `${p.code} at ${p.path.join(".")}: ${p.message}`);
    expect(errors).toEqual([]);
    expect(r.code).toBe(0);
  }, 60_000);

  test("Redocly finds no error", () => {
    const r = run("redocly", ["lint", "--format", "json", docFile]);
    const report = JSON.parse(r.out) as { totals: { errors: number }; problems: { severity: string; ruleId: string; message: string }[] };
    // Invalid examples are only warnings in Redocly's rules: here they count as errors.
    const errors = report.problems.filter((p) => p.severity === "error" || p.ruleId.startsWith("no-invalid-"));
    expect(errors.map((p) => `${p.ruleId}: ${p.message}`)).toEqual([]);
    expect(report.totals.errors).toBe(0);
    expect(r.code).toBe(0);
  }, 60_000);

  test("a client generated with openapi-typescript type-checks a call to every operation", () => {
    const work = join(dir.path, "client");
    const generated = run("openapi-typescript", [docFile, "--output", join(work, "api.d.ts")]);
    expect(generated.code).toBe(0);
    cpSync(CLIENT, join(work, "client.ts"));
    const compilerOptions = {
      target: "ES2022",
      module: "ESNext",
      moduleResolution: "bundler",
      lib: ["ES2022", "DOM"],
      types: [],
      strict: true,
      noEmit: true,
      skipLibCheck: true,
      paths: { "openapi-fetch": [join(ROOT, "node_modules/openapi-fetch")] },
    };
    writeFileSync(join(work, "tsconfig.json"), JSON.stringify({ compilerOptions, files: ["client.ts"] }));
    const tsc = run("tsc", ["-p", join(work, "tsconfig.json")]);
    expect(tsc.out + tsc.err).toBe("");
    expect(tsc.code).toBe(0);

    // Every operation of the document has its call in the client.
    const text = readFileSync(CLIENT, "utf8");
    const called = new Set([...text.matchAll(/\.(GET|POST|PUT|PATCH|DELETE)\("([^"]+)"/g)].map((m) => `${m[1]!.toLowerCase()} ${m[2]}`));
    const operations = Object.entries<Record<string, unknown>>(doc.paths).flatMap(([path, item]) =>
      Object.keys(item).map((method) => `${method} ${path}`),
    );
    expect(operations.filter((o) => !called.has(o))).toEqual([]);
  }, 60_000);

  test("that client calls every operation of a running Postroom", async () => {
    const { callEveryOperation } = (await import(CLIENT)) as {
      callEveryOperation(baseUrl: string, account: typeof ACCOUNT_A, operatorToken: string): Promise<[string, number][]>;
    };
    const answers = await callEveryOperation(`http://127.0.0.1:${t.app.httpPort}`, ACCOUNT_A, OPERATOR);
    const operationIds = Object.values<Record<string, { operationId: string }>>(doc.paths).flatMap((item) =>
      Object.values(item).map((op) => op.operationId),
    );
    expect([...new Set(answers.map(([id]) => id))].sort()).toEqual(operationIds.sort());
    // The sending domain's records were never published: its verification answers 422 with
    // the record. The account has no webhook: its test POST answers 422 saying so. No mail
    // came to the address: there is no kept message to show or post again (404), and none
    // waits for its target to try now (404). The messages
    // are sent in test mode: none of their recipients waits, so a reschedule is 409.
    const expected: Record<string, number> = {
      rescheduleOutboundMessage: 409,
      verifySendingDomain: 422,
      testWebhook: 422,
      getIncomingMessage: 404,
      postIncomingAgain: 404,
      tryWaitingInboundNow: 404,
    };
    const unexpected = answers.filter(([id, status]) => (id in expected ? status !== expected[id] : status < 200 || status >= 300));
    expect(unexpected).toEqual([]);
  }, 60_000);
});
