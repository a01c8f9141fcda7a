// docs/receiving.md lists every field of the json+n payload, and only fields that exist.
// A real payload: a DKIM-signed reply with text, HTML, an inline image and an attachment,
// sent over SMTP to two json+n addresses of a running appliance (attachments embedded, and
// kept locally behind URLs); every key path of the two POSTs must be a row of the field
// table, and every row a key path. `headers` is one row: its keys are the message's.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { readFileSync } from "node:fs";
import { bearer, startTestApp, type TestApp } from "../helpers/app.ts";
import { ACCOUNT_A } from "../helpers/fixtures.ts";
import { sendSampleReply } from "../helpers/sample-reply.ts";
import { TestTarget } from "../helpers/target.ts";
import { freePort } from "../helpers/pebble.ts";

const RECEIVING_MD = new URL("../../docs/receiving.md", import.meta.url);
const A = `/api/v0.1/${ACCOUNT_A.id}`;

/** Every key path of a JSON value: `a.b`, `list[].c`; the keys inside `headers` are the message's own. */
function keyPaths(value: unknown, prefix = ""): string[] {
  if (Array.isArray(value)) return value.flatMap((v) => keyPaths(v, `${prefix}[]`));
  if (value === null || typeof value !== "object") return [];
  return Object.entries(value).flatMap(([key, v]) => {
    const path = prefix ? `${prefix}.${key}` : key;
    return path === "headers" ? [path] : [path, ...keyPaths(v, path)];
  });
}

/** The first column of the json+n field table: the documented paths. */
function documentedPaths(markdown: string): string[] {
  const section = markdown.slice(markdown.indexOf("\n## json+n"), markdown.indexOf("\n## multipart+n"));
  return [...section.matchAll(/^\| `([^`]+)` \|/gm)].map((m) => m[1]!);
}

let t: TestApp;
let target: TestTarget;
let paths: string[] = [];

beforeAll(async () => {
  target = TestTarget.start();
  // inbound.spamd at a port where nothing listens: envelope.spamd is there with every field (success false).
  t = await startTestApp({ inbound: true, inboundKeys: `[inbound.spamd]\naddress = "127.0.0.1:${await freePort()}"` });
  const addresses: string[] = [];
  for (const [path, attachments] of [
    ["/embedded", {}],
    ["/stored", { store: "local" }],
  ] as const) {
    // The second keeps its messages too: envelope.store_url.
    const res = await t.json("POST", `${A}/addresses`, {
      auth: bearer(ACCOUNT_A.token),
      body: { target: target.url(path), target_format: "json+n", attachments, store_messages: path === "/stored" },
    });
    expect(res.status).toBe(201);
    addresses.push(res.body.email);
  }
  await sendSampleReply(t.app.inboundPort!, addresses);
  const posts = [...target.at("/embedded"), ...target.at("/stored")];
  expect(posts.length).toBe(2);
  paths = [...new Set(posts.flatMap((p) => keyPaths(p.json)))].sort();
});
afterAll(async () => {
  await t.stop();
  await target.stop();
});

describe("docs/receiving.md's json+n field table", () => {
  test("the payload under test has the fields worth checking", () => {
    for (const p of ["envelope.dkim.signatures[].domain", "attachments[].content", "attachments[].url", "reply_plain", "headers"])
      expect(paths).toContain(p);
  });

  test("lists every field of a real payload", () => {
    const documented = new Set(documentedPaths(readFileSync(RECEIVING_MD, "utf8")));
    expect(paths.filter((p) => !documented.has(p))).toEqual([]);
  });

  test("lists no field a real payload lacks", () => {
    expect(documentedPaths(readFileSync(RECEIVING_MD, "utf8")).filter((p) => !paths.includes(p))).toEqual([]);
  });
});
