// Header names that are also names of JavaScript built-ins (`__proto__`, `constructor`,
// `toString`) reach a real HTTP target as the values the message had, in every payload
// format (issue 31, finding 7: `__proto__` was dropped, `toString` came out as
// `[null,"x"]` in JSON and `function Array() { [native code] }` in multipart).
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { ManualClock } from "../../src/lib/clock.ts";
import { bearer, startTestApp, type TestApp } from "../helpers/app.ts";
import { TestDnsServer } from "../helpers/dns-server.ts";
import { ACCOUNT_A } from "../helpers/fixtures.ts";
import { sendWithNodemailer } from "../helpers/smtp.ts";
import { TestTarget } from "../helpers/target.ts";

const A = `/api/v0.1/${ACCOUNT_A.id}`;
const auth = bearer(ACCOUNT_A.token);
const FORMATS = ["json", "multipart", "json+n", "multipart+n"] as const;

let t: TestApp;
let target: TestTarget;
let dns: TestDnsServer;
const emails: Record<string, string> = {};

const RAW = [
  "From: ann@sender.test",
  "To: {to}",
  "Subject: built-ins",
  "Message-ID: <builtins-1@sender.test>",
  "__proto__: polluted",
  "toString: first",
  "toString: second",
  "constructor: built",
  "hasOwnProperty: own",
  "",
  "hello",
  "",
].join("\r\n");

beforeAll(async () => {
  dns = await TestDnsServer.start();
  dns.set("sender.test", [{ type: "TXT", data: "v=spf1 ip4:127.0.0.1 -all" }]);
  target = TestTarget.start();
  // One parse worker: the headers cross a worker boundary (a structured clone) as in production.
  t = await startTestApp({
    inbound: true,
    dnsServer: dns.address,
    clock: new ManualClock(Date.parse("2026-11-22T12:00:00Z")),
    inboundKeys: "parse_workers = 1",
  });
  for (const format of FORMATS) {
    const res = await t.json("POST", `${A}/addresses`, { auth, body: { target: target.url(`/${format}`), target_format: format } });
    expect(res.status).toBe(201);
    emails[format] = res.body.email;
  }
  const to = Object.values(emails);
  const result = await sendWithNodemailer(
    t.app.inboundPort!,
    { raw: RAW.replace("{to}", to.join(", ")) },
    { envelope: { from: "ann@sender.test", to } },
  );
  expect(result.response).toBe("250 2.0.0 Accepted");
});
afterAll(async () => {
  await t.stop();
  await target.stop();
  await dns.stop();
});

describe("headers named like JavaScript built-ins", () => {
  test("json (names as written): each is its own key with the message's values", () => {
    const { headers } = target.at("/json")[0]!.json;
    expect(Object.getOwnPropertyNames(headers)).toContain("__proto__");
    expect(Object.getOwnPropertyDescriptor(headers, "__proto__")?.value).toBe("polluted");
    expect(Object.getOwnPropertyDescriptor(headers, "toString")?.value).toEqual(["first", "second"]);
    expect(Object.getOwnPropertyDescriptor(headers, "constructor")?.value).toBe("built");
    expect(Object.getOwnPropertyDescriptor(headers, "hasOwnProperty")?.value).toBe("own");
  });

  test("json+n (lower snake case names)", () => {
    const { headers } = target.at("/json+n")[0]!.json;
    expect(Object.getOwnPropertyDescriptor(headers, "__proto__")?.value).toBe("polluted");
    expect(Object.getOwnPropertyDescriptor(headers, "tostring")?.value).toEqual(["first", "second"]);
    expect(Object.getOwnPropertyDescriptor(headers, "constructor")?.value).toBe("built");
    expect(Object.getOwnPropertyDescriptor(headers, "hasownproperty")?.value).toBe("own");
  });

  test("multipart (names as written): form fields with the message's values", async () => {
    const form = await TestTarget.formData(target.at("/multipart")[0]!);
    expect(form.get("headers[__proto__]")).toBe("polluted");
    expect(form.getAll("headers[toString][0]")).toEqual(["first"]);
    expect(form.getAll("headers[toString][1]")).toEqual(["second"]);
    expect(form.getAll("headers[constructor]")).toEqual(["built"]);
    expect(form.get("headers[hasOwnProperty]")).toBe("own");
    const names = [...form.keys()].filter((k) => k.startsWith("headers["));
    expect(names.some((k) => /native code|^headers\[[^\]]+\]\[(?!\d)/.test(k))).toBe(false);
  });

  test("multipart+n", async () => {
    const form = await TestTarget.formData(target.at("/multipart+n")[0]!);
    expect(form.get("headers[__proto__]")).toBe("polluted");
    expect(form.get("headers[tostring][0]")).toBe("first");
    expect(form.get("headers[tostring][1]")).toBe("second");
    expect(form.getAll("headers[constructor]")).toEqual(["built"]);
    for (const [, value] of form.entries()) expect(String(value)).not.toContain("native code");
  });
});
