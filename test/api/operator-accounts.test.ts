// The operator API's accounts (API.md section 10) on both store engines, through the
// appliance's handler: create, mint, scope, suspend, revoke, delete; config accounts are
// listed and immutable (409); bad input names its field and leaves nothing behind; every
// change is in the audit log under the operator token's label.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { hashSecret } from "../../src/auth/secrets.ts";
import { operatorTokenLabel } from "../../src/http/authenticate.ts";
import { bearer } from "../helpers/app.ts";
import { ENGINE_NAMES, type EngineApp, startTestAppOn } from "../helpers/engine-app.ts";
import { ACCOUNT_A } from "../helpers/fixtures.ts";
import { requireTools } from "../helpers/tools.ts";

const OPERATOR = "pr_operator_token_tenants";
const op = bearer(OPERATOR);
const OPS = "/api/v0.1/operator";
const pgTest = requireTools("postgresql");

describe.each(ENGINE_NAMES)("operator accounts on %s", (engine) => {
  const engineTest = engine === "PostgreSQL" ? pgTest : test;
  let t: EngineApp;
  beforeAll(async () => {
    t = await startTestAppOn(engine, {
      accounts: [ACCOUNT_A],
      outbound: `[[outbound.ip_pools]]\nname = "bulk"\naddresses = [{ ip = "127.0.0.2", helo = "mta2.postroom.test" }]`,
      extra: `[dashboard]\nadmin_tokens = ["${hashSecret(OPERATOR)}"]`,
    });
  }, 60_000);
  afterAll(() => t?.stop());

  const create = async (body: unknown = { name: "Customer" }) => {
    const res = await t.json("POST", `${OPS}/accounts`, { auth: op, body });
    expect(res.status).toBe(201);
    return res.body;
  };
  const mint = async (id: string, body: unknown = {}) => {
    const res = await t.json("POST", `${OPS}/accounts/${id}/api_tokens`, { auth: op, body });
    expect(res.status).toBe(201);
    return res.body;
  };

  engineTest("an account made through the API works with the token minted for it, read scope only reads", async () => {
    const account = await create({ name: "Customer 1", rate_limit: "off" });
    expect(account).toMatchObject({ name: "Customer 1", source: "api", suspended: false, api_tokens: [], outbound_accounts: [] });
    expect(account.id).toMatch(/^[0-9a-f]{16}$/);
    const full = await mint(account.id, { name: "ci" });
    expect(full).toMatchObject({ name: "ci", scopes: ["read", "write"] });
    expect(full.token).toStartWith("pr_");
    const read = await mint(account.id, { scopes: ["read"] });
    expect(read.scopes).toEqual(["read"]);
    const path = `/api/v0.1/${account.id}/addresses`;
    const body = { target: "https://target.example/in", target_format: "json+n" };
    expect((await t.json("POST", path, { auth: bearer(full.token), body })).status).toBe(201);
    expect((await t.json("GET", path, { auth: bearer(read.token) })).body).toHaveLength(1);
    const refused = await t.json("POST", path, { auth: bearer(read.token), body });
    expect(refused.status).toBe(403);
    expect(refused.body.error).toStartWith('Forbidden: this token has the scope "read" only');
    // Listed with the tokens (never their secrets), and last_used_at once used.
    await Bun.sleep(1000);
    const listed = (await t.json("GET", `${OPS}/accounts/${account.id}`, { auth: op })).body;
    expect(JSON.stringify(listed)).not.toContain(full.token);
    expect(listed.api_tokens.map((x: { id: string }) => x.id)).toEqual([full.id, read.id]);
    expect(listed.api_tokens[0].last_used_at).not.toBeNull();
  });

  engineTest("suspension refuses the account's tokens and keys (403); lifting it lets them in again", async () => {
    const account = await create();
    const token = (await mint(account.id)).token;
    const outbound = (await t.json("POST", `${OPS}/accounts/${account.id}/outbound_accounts`, { auth: op, body: {} })).body;
    const send = { from: "a@example.com", to: "b@example.com", subject: "x", plain: "x" };
    const suspend = await t.json("PATCH", `${OPS}/accounts/${account.id}`, { auth: op, body: { suspended: true } });
    expect(suspend.status).toBe(200);
    expect(suspend.body.suspended).toBe(true);
    const call = await t.json("GET", `/api/v0.1/${account.id}/addresses`, { auth: bearer(token) });
    expect(call.status).toBe(403);
    expect(call.body.error).toStartWith("Forbidden: this account is suspended");
    const sent = await t.json("POST", `/api/v0.1/${outbound.id}/messages`, { auth: bearer(outbound.key), body: send });
    expect(sent.status).toBe(403);
    await t.json("PATCH", `${OPS}/accounts/${account.id}`, { auth: op, body: { suspended: false } });
    expect((await t.json("GET", `/api/v0.1/${account.id}/addresses`, { auth: bearer(token) })).status).toBe(200);
  });

  engineTest("revoking a token or deleting the account refuses it at once (401); a second delete is 404", async () => {
    const account = await create();
    const minted = await mint(account.id);
    const path = `/api/v0.1/${account.id}/addresses`;
    expect((await t.json("GET", path, { auth: bearer(minted.token) })).status).toBe(200);
    const revoked = await t.json("DELETE", `${OPS}/accounts/${account.id}/api_tokens/${minted.id}`, { auth: op });
    expect(revoked.status).toBe(202);
    expect((await t.json("GET", path, { auth: bearer(minted.token) })).status).toBe(401);
    const again = await mint(account.id);
    expect((await t.json("DELETE", `${OPS}/accounts/${account.id}`, { auth: op })).status).toBe(202);
    expect((await t.json("GET", path, { auth: bearer(again.token) })).status).toBe(401);
    const second = await t.json("DELETE", `${OPS}/accounts/${account.id}`, { auth: op });
    expect(second.status).toBe(404);
    expect(second.body.error).toContain(`no account ${account.id}`);
    expect((await t.json("GET", `${OPS}/accounts`, { auth: op })).body.map((a: { id: string }) => a.id)).not.toContain(account.id);
  });

  engineTest("an outbound account has at most two live keys; a revoked key stops sending", async () => {
    const account = await create();
    const base = `${OPS}/accounts/${account.id}/outbound_accounts`;
    const outbound = (await t.json("POST", base, { auth: op, body: { name: "mailer", send_rate_limit: "10/s", ip_pool: "bulk" } })).body;
    expect(outbound).toMatchObject({ name: "mailer", send_rate_limit: "10/s", ip_pool: "bulk", test_mode: false });
    expect(outbound.keys).toHaveLength(1);
    const second = await t.json("POST", `${base}/${outbound.id}/keys`, { auth: op });
    expect(second.status).toBe(201);
    const third = await t.json("POST", `${base}/${outbound.id}/keys`, { auth: op });
    expect(third.status).toBe(409);
    expect(third.body.error).toContain("2 live keys");
    const stats = `/api/v0.1/${outbound.id}/messages`;
    const send = { from: "a@example.com", to: "b@example.com", subject: "x", plain: "x" };
    // Not 401: the key is known (the send itself is refused for an unverified From domain).
    expect((await t.json("POST", stats, { auth: bearer(second.body.key), body: send })).status).not.toBe(401);
    expect((await t.json("DELETE", `${base}/${outbound.id}/keys/${second.body.id}`, { auth: op })).status).toBe(202);
    expect((await t.json("POST", stats, { auth: bearer(second.body.key), body: send })).status).toBe(401);
    expect((await t.json("POST", stats, { auth: bearer(outbound.key), body: send })).status).not.toBe(401);
  });

  engineTest("an ip_pool that names no [[outbound.ip_pools]] is 422 naming ip_pool; nothing is made", async () => {
    const account = await create();
    const res = await t.json("POST", `${OPS}/accounts/${account.id}/outbound_accounts`, { auth: op, body: { ip_pool: "nope" } });
    // Before: 201, and the account's mail left from the default address.
    expect(res.status).toBe(422);
    expect(res.body.error).toStartWith("ip_pool: ");
    expect(res.body.error).toContain('"bulk"');
    expect((await t.json("GET", `${OPS}/accounts/${account.id}`, { auth: op })).body.outbound_accounts).toEqual([]);
  });

  engineTest("config accounts are listed as source config and answer 409 to every change", async () => {
    const list = (await t.json("GET", `${OPS}/accounts`, { auth: op })).body;
    const a = list.find((x: { id: string }) => x.id === ACCOUNT_A.id);
    expect(a).toMatchObject({ source: "config", rate_limit: "off", suspended: false });
    expect(a.outbound_accounts[0].id).toBe(ACCOUNT_A.outboundId);
    for (const [method, path, body] of [
      ["PATCH", `${OPS}/accounts/${ACCOUNT_A.id}`, { suspended: true }],
      ["DELETE", `${OPS}/accounts/${ACCOUNT_A.id}`, undefined],
      ["POST", `${OPS}/accounts/${ACCOUNT_A.id}/api_tokens`, {}],
      ["POST", `${OPS}/accounts/${ACCOUNT_A.id}/outbound_accounts`, {}],
    ] as const) {
      const res = await t.json(method, path, { auth: op, body });
      expect(res.status).toBe(409);
      expect(res.body.error).toStartWith(`Conflict: account ${ACCOUNT_A.id} is declared in the config file`);
    }
    expect((await t.json("GET", `/api/v0.1/${ACCOUNT_A.id}/addresses`, { auth: bearer(ACCOUNT_A.token) })).status).toBe(200);
  });

  engineTest("the list comes by ID a page at a time: ?limit= and ?after= the last ID; a bad limit is 422", async () => {
    for (let i = 0; i < 3; i++) await create({ name: `Paged ${i}` });
    const all = (await t.json("GET", `${OPS}/accounts`, { auth: op })).body.map((a: { id: string }) => a.id) as string[];
    expect(all).toEqual(all.toSorted());
    expect(all.length).toBeGreaterThanOrEqual(4);
    const first = (await t.json("GET", `${OPS}/accounts?limit=2`, { auth: op })).body.map((a: { id: string }) => a.id);
    expect(first).toEqual(all.slice(0, 2));
    const next = (await t.json("GET", `${OPS}/accounts?limit=2&after=${first[1]}`, { auth: op })).body.map((a: { id: string }) => a.id);
    expect(next).toEqual(all.slice(2, 4));
    for (const limit of ["0", "1001", "x"]) {
      const res = await t.json("GET", `${OPS}/accounts?limit=${limit}`, { auth: op });
      expect([res.status, res.body.error]).toEqual([422, expect.stringContaining("limit")]);
    }
  });

  engineTest("bad input names its field, and nothing half-made is left behind", async () => {
    const before = (await t.json("GET", `${OPS}/accounts`, { auth: op })).body.length;
    const cases: [string, string, unknown, number, string][] = [
      ["POST", `${OPS}/accounts`, { name: "x".repeat(101) }, 422, "name: must be one line of at most 100 characters"],
      ["POST", `${OPS}/accounts`, { name: "x", rate_limit: "lots" }, 422, "rate_limit: must be"],
      ["POST", `${OPS}/accounts`, { name: "x", rate_limit: "0/min" }, 422, "rate_limit: must be"],
      ["POST", `${OPS}/accounts`, { name: "x", colour: "red" }, 422, "colour"],
      ["POST", `${OPS}/accounts`, {}, 422, "name"],
    ];
    for (const [method, path, body, status, text] of cases) {
      const res = await t.json(method, path, { auth: op, body });
      expect({ status: res.status, body: res.body }).toMatchObject({ status, body: { status } });
      expect(res.body.error).toContain(text);
    }
    const account = await create();
    for (const [body, text] of [
      [{ scopes: ["read", "admin"] }, 'scopes[1]: unknown scope "admin"'],
      [{ scopes: ["write"] }, 'scopes: must be ["read"] or ["read", "write"]'],
      [{ name: "n\r\nX-Evil: 1" }, "name: "],
    ] as const) {
      const res = await t.json("POST", `${OPS}/accounts/${account.id}/api_tokens`, { auth: op, body });
      expect(res.status).toBe(422);
      expect(res.body.error).toContain(text);
    }
    const outbound = await t.json("POST", `${OPS}/accounts/${account.id}/outbound_accounts`, {
      auth: op,
      body: { send_rate_limit: "5 per day" },
    });
    expect(outbound.status).toBe(422);
    expect(outbound.body.error).toStartWith("send_rate_limit: must be");
    const missing = await t.json("POST", `${OPS}/accounts/ffffffffffffffff/api_tokens`, { auth: op, body: {} });
    expect(missing.status).toBe(404);
    const after = (await t.json("GET", `${OPS}/accounts/${account.id}`, { auth: op })).body;
    expect(after).toMatchObject({ api_tokens: [], outbound_accounts: [] });
    expect((await t.json("GET", `${OPS}/accounts`, { auth: op })).body.length).toBe(before + 1);
  });

  engineTest("every change is in the audit log, newest first, under the operator token's label", async () => {
    const account = await create({ name: "Audited" });
    const token = await mint(account.id);
    await t.json("DELETE", `${OPS}/accounts/${account.id}/api_tokens/${token.id}`, { auth: op });
    await t.json("PATCH", `${OPS}/accounts/${account.id}`, { auth: op, body: { suspended: true } });
    const res = await t.json("GET", `${OPS}/audit?account_id=${account.id}`, { auth: op });
    expect(res.status).toBe(200);
    expect(res.body.map((e: { action: string }) => e.action)).toEqual([
      "account.update",
      "api_token.revoke",
      "api_token.create",
      "account.create",
    ]);
    expect(res.body[0]).toMatchObject({
      operator: operatorTokenLabel(hashSecret(OPERATOR)),
      account_id: account.id,
      details: { suspended: true },
    });
    expect(JSON.stringify(res.body)).not.toContain(token.token);
    // An account's token is not an operator's.
    expect((await t.json("GET", `${OPS}/audit`, { auth: bearer(ACCOUNT_A.token) })).status).toBe(403);
  });

  engineTest(
    "dashboard sessions: a read token's session only reads; an admin session makes operator calls under its token's label",
    async () => {
      const account = await create({ name: "Dashboard" });
      const read = await mint(account.id, { scopes: ["read"] });
      const dash = { "x-postroom-dashboard": "1" };
      const signIn = async (token: string) => {
        const res = await t.call("POST", "/dashboard/session", { body: { token }, headers: dash });
        expect(res.status).toBe(201);
        return res.headers.get("set-cookie")!.split(";")[0]!;
      };
      const readCookie = await signIn(read.token);
      const path = `/api/v0.1/${account.id}/addresses`;
      expect((await t.call("GET", path, { headers: { cookie: readCookie } })).status).toBe(200);
      const refused = await t.call("POST", path, {
        body: { target: "https://t.example/", target_format: "json+n" },
        headers: { cookie: readCookie, ...dash },
      });
      expect(refused.status).toBe(403);
      // An account's session is not an operator's; an admin session is, named by its token.
      expect((await t.call("GET", `${OPS}/accounts`, { headers: { cookie: readCookie } })).status).toBe(403);
      const adminCookie = await signIn(OPERATOR);
      const made = await t.call("POST", `${OPS}/accounts`, {
        body: { name: "by the dashboard" },
        headers: { cookie: adminCookie, ...dash },
      });
      expect(made.status).toBe(201);
      // A write without the dashboard's header (another site's form) is refused.
      const forged = await t.call("POST", `${OPS}/accounts`, { body: { name: "forged" }, headers: { cookie: adminCookie } });
      expect(forged.status).toBe(403);
      const audit = (await t.json("GET", `${OPS}/audit`, { auth: op })).body;
      expect(audit[0]).toMatchObject({ action: "account.create", operator: operatorTokenLabel(hashSecret(OPERATOR)) });
    },
  );
});
