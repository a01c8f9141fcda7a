import { describe, expect, test } from "bun:test";
import { AccountRegistry } from "../../src/auth/accounts.ts";
import { authorize, parseAuthorization, type AuthScheme } from "../../src/auth/authenticate.ts";
import { hashSecret, mintSecret, secretMatchesAny } from "../../src/auth/secrets.ts";
import type { AccountConfig } from "../../src/config/config.ts";

const account = (id: string, token: string, outboundId: string, key: string): AccountConfig => ({
  id,
  name: id,
  apiTokenHashes: [hashSecret(token)],
  rateLimit: null,
  testMode: false,
  markdown: false,
  domainTargets: false,
  webhook: null,
  tracking: { opens: false, clicks: false },
  unsubscribe: { url: null, mailto: null },
  outbound: [{ id: outboundId, apiKeyHashes: [hashSecret(key)], sendRateLimit: null, testMode: false, webhook: null }],
});

const registry = new AccountRegistry([
  account("aaaa000000000001", "tokA", "aaaa0000000000f1", "keyA"),
  account("bbbb000000000002", "tokB", "bbbb0000000000f2", "keyB"),
]);
const b64 = (s: string) => Buffer.from(s).toString("base64");

describe("parseAuthorization", () => {
  test.each([
    ["Bearer abc", { type: "bearer", secret: "abc" }],
    ["bearer abc", { type: "bearer", secret: "abc" }],
    [`Basic ${b64("user:pa:ss")}`, { type: "basic", username: "user", secret: "pa:ss" }],
    [`Basic ${b64("user:")}`, { type: "basic", username: "user", secret: "" }],
  ])("%p", (header, cred) => expect(parseAuthorization(header)).toEqual(cred as never));
  test.each([null, "", "Bearer", "Token abc", `Basic ${b64("nocolon")}`, `Basic ${b64(":pass")}`, "Bearer a b"])(
    "%p is no credential",
    (header) => expect(parseAuthorization(header)).toBeNull(),
  );
});

describe("authorize", () => {
  const bearer = (s: string) => ({ type: "bearer" as const, secret: s });
  const basic = (u: string, s: string) => ({ type: "basic" as const, username: u, secret: s });
  const cases: [string, ReturnType<typeof bearer> | ReturnType<typeof basic> | null, string, AuthScheme, 200 | 401 | 403][] = [
    ["no credential", null, "aaaa000000000001", "bearerAPIToken", 401],
    ["wrong token", bearer("nope"), "aaaa000000000001", "bearerAPIToken", 401],
    ["empty token", bearer(""), "aaaa000000000001", "bearerAPIToken", 401],
    ["own token", bearer("tokA"), "aaaa000000000001", "bearerAPIToken", 200],
    ["own token as Basic", basic("aaaa000000000001", "tokA"), "aaaa000000000001", "bearerAPIToken", 200],
    ["Basic with another account's name", basic("bbbb000000000002", "tokA"), "aaaa000000000001", "bearerAPIToken", 401],
    ["Basic with an unknown name", basic("cccc000000000003", "tokA"), "aaaa000000000001", "bearerAPIToken", 401],
    ["valid token on another account's path", bearer("tokB"), "aaaa000000000001", "bearerAPIToken", 403],
    ["valid token on an unknown account's path", bearer("tokA"), "ffff000000000000", "bearerAPIToken", 403],
    ["sending key on a management route", bearer("keyA"), "aaaa000000000001", "bearerAPIToken", 403],
    ["sending key on its own ID's management path", bearer("keyA"), "aaaa0000000000f1", "bearerAPIToken", 403],
    ["sending key on E11", bearer("keyA"), "aaaa0000000000f1", "smtpAuth", 200],
    ["sending key as Basic on E11", basic("aaaa0000000000f1", "keyA"), "aaaa0000000000f1", "smtpAuth", 200],
    ["management token on E11", bearer("tokA"), "aaaa0000000000f1", "smtpAuth", 403],
    ["another outbound account's key on E11", bearer("keyB"), "aaaa0000000000f1", "smtpAuth", 403],
  ];
  test.each(cases)("%s", (_name, cred, pathId, scheme, expected) => {
    const verdict = authorize(registry, cred, pathId, scheme);
    expect(verdict.ok ? 200 : verdict.status).toBe(expected);
  });

  test("a replaced registry stops accepting the old token at once (SIGHUP)", () => {
    const reg = new AccountRegistry([account("aaaa000000000001", "old", "aaaa0000000000f1", "k")]);
    expect(authorize(reg, bearer("old"), "aaaa000000000001", "bearerAPIToken").ok).toBe(true);
    reg.replace([account("aaaa000000000001", "new", "aaaa0000000000f1", "k")]);
    expect(authorize(reg, bearer("old"), "aaaa000000000001", "bearerAPIToken").ok).toBe(false);
    expect(authorize(reg, bearer("new"), "aaaa000000000001", "bearerAPIToken").ok).toBe(true);
  });
});

describe("secrets", () => {
  test("minted secrets are long, URL-safe and distinct; only their hash is stored", () => {
    const a = mintSecret();
    const b = mintSecret();
    expect(a).not.toBe(b);
    expect(a).toMatch(/^pr_[A-Za-z0-9_-]{43}$/);
    expect(hashSecret(a)).toMatch(/^sha256:[0-9a-f]{64}$/);
    expect(hashSecret("abc")).toBe("sha256:ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
  });
  test("matching compares against every hash", () => {
    expect(secretMatchesAny("abc", [hashSecret("x"), hashSecret("abc")])).toBe(true);
    expect(secretMatchesAny("abc", [hashSecret("x"), "sha256:short"])).toBe(false);
    expect(secretMatchesAny("abc", [])).toBe(false);
  });
});
