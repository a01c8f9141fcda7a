// docs/receiving.md lists every field of the json+n payload, and only fields that exist.
// A real payload: a DKIM-signed reply with text, HTML, an inline image and an attachment,
// sent over SMTP to two json+n addresses of a running appliance (attachments embedded, and
// kept locally behind URLs); every key path of the two POSTs must be a row of the field
// table, and every row a key path. `headers` is one row: its keys are the message's.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { generateKeyPairSync } from "node:crypto";
import { readFileSync } from "node:fs";
import { bearer, startTestApp, type TestApp } from "../helpers/app.ts";
import { ACCOUNT_A } from "../helpers/fixtures.ts";
import { sendWithNodemailer } from "../helpers/smtp.ts";
import { TestTarget } from "../helpers/target.ts";

const RECEIVING_MD = new URL("../../docs/receiving.md", import.meta.url);
const A = `/api/v0.1/${ACCOUNT_A.id}`;
const PNG = Buffer.from("89504e470d0a1a0a0000000d49484452000000010000000108060000001f15c4890000000d4944415478da63f8ffff3f0005fe02fea7d6a6a30000000049454e44ae426082", "hex");

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
  t = await startTestApp({ inbound: true });
  const addresses: string[] = [];
  for (const [path, attachments] of [["/embedded", {}], ["/stored", { store: "local" }]] as const) {
    const res = await t.json("POST", `${A}/addresses`, { auth: bearer(ACCOUNT_A.token), body: { target: target.url(path), target_format: "json+n", attachments } });
    expect(res.status).toBe(201);
    addresses.push(res.body.email);
  }
  const { privateKey } = generateKeyPairSync("rsa", { modulusLength: 2048 });
  const result = await sendWithNodemailer(t.app.inboundPort!, {
    from: '"Alice Example" <alice@sender.example.org>',
    to: addresses,
    subject: "Re: Invoice 2026-118",
    inReplyTo: "<inv-2026-118@shop.example.net>",
    text: "Thanks, paid today.\n\nAlice\n\nOn Mon, 23 Nov 2026, Shop <billing@shop.example.net> wrote:\n> Your invoice is attached.\n",
    html: '<p>Thanks, paid today.</p><p><img src="cid:logo@sender.example.org"></p>',
    attachments: [
      { filename: "logo.png", content: PNG, contentType: "image/png", cid: "logo@sender.example.org" },
      { filename: "receipt.txt", content: "Paid: 118.00 EUR\n", contentType: "text/plain" },
    ],
    dkim: { domainName: "sender.example.org", keySelector: "s2026", privateKey: privateKey.export({ type: "pkcs1", format: "pem" }).toString() },
  });
  expect(result.response).toBe("250 2.0.0 Accepted");
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
    for (const p of ["envelope.dkim.signatures[].domain", "attachments[].content", "attachments[].url", "reply_plain", "headers"]) expect(paths).toContain(p);
  });

  test("lists every field of a real payload", () => {
    const documented = new Set(documentedPaths(readFileSync(RECEIVING_MD, "utf8")));
    expect(paths.filter((p) => !documented.has(p))).toEqual([]);
  });

  test("lists no field a real payload lacks", () => {
    expect(documentedPaths(readFileSync(RECEIVING_MD, "utf8")).filter((p) => !paths.includes(p))).toEqual([]);
  });
});
