// Tenants by API with the built binary (issue 33): an operator makes an account, mints its
// tokens and an outbound account over HTTP, and the account then works as a config one
// does: an address made with its token takes mail from a real SMTP client, its outbound
// account sends through E11 and SMTP submission to a real sink; a read-scoped token is
// refused writes; suspension refuses its calls, sends and mail; a restart keeps it all;
// a config account cannot be changed through the API.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { join } from "node:path";
import { hashSecret } from "../../src/auth/secrets.ts";
import { builtBinary } from "../helpers/binary.ts";
import { TestDnsServer } from "../helpers/dns-server.ts";
import { ACCOUNT_A, testConfigToml } from "../helpers/fixtures.ts";
import { freePort } from "../helpers/pebble.ts";
import { ServeProcess } from "../helpers/process.ts";
import { publishRecords, SENDING_KEYS } from "../helpers/sending-domain.ts";
import { eventually, routeToSink, SmtpSink } from "../helpers/sink.ts";
import { sendWithNodemailer } from "../helpers/smtp.ts";
import { TestTarget } from "../helpers/target.ts";
import { tempDir } from "../helpers/tmp.ts";

const OPERATOR = "pr_operator_token_e2e_tenants";
const dir = tempDir();
let dns: TestDnsServer;
let sink: SmtpSink;
let target: TestTarget;
let server: ServeProcess;
let configPath: string;
let http: string;
let inboundPort: number;
let submissionPort: number;

/** A call to the running binary; the parsed body. */
async function call(method: string, path: string, token: string, body?: unknown): Promise<{ status: number; body: any }> {
  const res = await fetch(`${http}${path}`, {
    method,
    headers: { authorization: `Bearer ${token}`, ...(body === undefined ? {} : { "content-type": "application/json" }) },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await res.text();
  return { status: res.status, body: text ? JSON.parse(text) : null };
}
const op = (method: string, path: string, body?: unknown) => call(method, `/api/v0.1/operator${path}`, OPERATOR, body);

async function start(): Promise<void> {
  server = ServeProcess.run([builtBinary(), "serve", "--config", configPath], dir.path);
  await server.waitFor((l) => l.msg === "postroom started", 30_000);
}
async function stop(): Promise<void> {
  server.signal("SIGTERM");
  await server.exited();
}

/** The pool the operator API's outbound account names (issue 29: a stored account's ip_pool holds). */
const POOL = `[[outbound.ip_pools]]\nname = "shared"\naddresses = [{ ip = "127.0.0.2", helo = "mta2.tenant.test" }]`;

beforeAll(async () => {
  dns = await TestDnsServer.start();
  sink = await SmtpSink.start();
  routeToSink(dns, "example.org");
  target = TestTarget.start();
  const [httpPort] = [await freePort()];
  [inboundPort, submissionPort] = [await freePort(), await freePort()];
  configPath = join(dir.path, "postroom.toml");
  await Bun.write(
    configPath,
    testConfigToml({
      dataDir: join(dir.path, "data"),
      dnsServer: dns.address,
      inbound: true,
      submission: true,
      accounts: [ACCOUNT_A],
      outbound: `${SENDING_KEYS}\nmx_port = ${sink.port}\nallow_private_mx = true\n${POOL}`,
      extra: `[dashboard]\nadmin_tokens = ["${hashSecret(OPERATOR)}"]`,
    })
      .replace('listen = "127.0.0.1:0"', `listen = "127.0.0.1:${httpPort}"`)
      .replace('inbound_listen = "127.0.0.1:0"', `inbound_listen = "127.0.0.1:${inboundPort}"`)
      .replace('submission_listen = "127.0.0.1:0"', `submission_listen = "127.0.0.1:${submissionPort}"`)
      .replace('level = "warn"', 'level = "info"'),
  );
  http = `http://127.0.0.1:${httpPort}`;
  await start();
}, 180_000);

afterAll(async () => {
  await stop().catch(() => {});
  await sink?.stop();
  await dns?.stop();
  await target?.stop();
  dir.remove();
});

describe("an account made through the operator API, with the built binary", () => {
  let account: { id: string };
  let token: string;
  let readToken: string;
  let revoked: string;
  let outbound: { id: string; key: string };
  let email: string;

  const inbound = (to: string, subject: string) => sendWithNodemailer(inboundPort, { from: "bob@remote.test", to, subject, text: "hello" });
  const submit = (subject: string, key = outbound.key) =>
    sendWithNodemailer(
      submissionPort,
      { from: "ann@tenant.test", to: `sub-${subject}@example.org`, subject, text: "by submission" },
      { auth: { user: outbound.id, pass: key } },
    );
  const e11 = (subject: string, key = outbound.key) =>
    call("POST", `/api/v0.1/${outbound.id}/messages`, key, {
      from: "ann@tenant.test",
      to: `api-${subject}@example.org`,
      subject,
      plain: "x",
    });

  test("create an account, mint a token, create an address with it, and receive mail for it", async () => {
    const created = await op("POST", "/accounts", { name: "Tenant One" });
    expect(created.status).toBe(201);
    account = created.body;
    const minted = await op("POST", `/accounts/${account.id}/api_tokens`, { name: "integration" });
    expect(minted.status).toBe(201);
    token = minted.body.token;
    const address = await call("POST", `/api/v0.1/${account.id}/addresses`, token, {
      target: target.url("/tenant"),
      target_format: "json+n",
    });
    expect(address.status).toBe(201);
    email = address.body.email;
    const sent = await inbound(email, "for the tenant");
    expect(sent.code).toBe(250);
    expect(target.at("/tenant").map((m) => m.json.headers.subject)).toEqual(["for the tenant"]);
  });

  test("a read-scoped token reads and gets 403 on every write", async () => {
    readToken = (await op("POST", `/accounts/${account.id}/api_tokens`, { scopes: ["read"] })).body.token;
    const A = `/api/v0.1/${account.id}`;
    expect((await call("GET", `${A}/addresses`, readToken)).status).toBe(200);
    for (const [method, path, body] of [
      ["POST", `${A}/addresses`, { target: target.url("/x"), target_format: "json+n" }],
      ["DELETE", `${A}/addresses/00000000000000000000`, undefined],
      ["POST", `${A}/sending_domains`, { domain: "read.test" }],
    ] as const) {
      const res = await call(method, path, readToken, body);
      expect({ method, path, status: res.status }).toEqual({ method, path, status: 403 });
      expect(res.body.error).toStartWith('Forbidden: this token has the scope "read" only');
    }
  });

  test("a new outbound account sends through E11 and authenticates SMTP submission", async () => {
    const created = await op("POST", `/accounts/${account.id}/outbound_accounts`, { name: "app", ip_pool: "shared" });
    expect(created.status).toBe(201);
    outbound = created.body;
    expect(outbound.id).toMatch(/^[0-9a-f]{16}$/);
    const domain = await call("POST", `/api/v0.1/${account.id}/sending_domains`, token, { domain: "tenant.test" });
    expect(domain.status).toBe(201);
    publishRecords(dns, domain.body);
    expect((await call("POST", `/api/v0.1/${account.id}/sending_domains/${domain.body.id}/verify`, token)).status).toBe(200);
    const api = await e11("by-e11");
    expect(api.status).toBe(202);
    const submitted = await submit("by-smtp");
    expect(submitted.response).toStartWith("250 2.0.0 Thanks! Queued as: ");
    await eventually(
      () => sink.to("api-by-e11@example.org").length === 1 && sink.to("sub-by-smtp@example.org").length === 1,
      15_000,
      "both sends delivered",
    );
    // Its ip_pool holds: both left from the pool's address, greeting with its name (before: 127.0.0.1, the hostname).
    for (const m of [...sink.to("api-by-e11@example.org"), ...sink.to("sub-by-smtp@example.org")])
      expect({ from: m.remoteAddress, helo: m.helo }).toEqual({ from: "127.0.0.2", helo: "mta2.tenant.test" });
    const unknown = await op("POST", `/accounts/${account.id}/outbound_accounts`, { name: "app", ip_pool: "nope" });
    expect(unknown.status).toBe(422);
    expect(unknown.body.error).toContain("ip_pool");
  }, 30_000);

  test("suspension refuses its calls (403), its sends (403, 550 5.7.1) and its mail (550 5.7.1), holds its queue; lifting it restores them", async () => {
    const sendAt = new Date(Date.now() + 2_000).toISOString();
    const scheduled = await call("POST", `/api/v0.1/${outbound.id}/messages`, outbound.key, {
      from: "ann@tenant.test",
      to: "api-queued@example.org",
      subject: "queued",
      plain: "x",
      send_at: sendAt,
    });
    expect(scheduled.status).toBe(202);
    expect((await op("PATCH", `/accounts/${account.id}`, { suspended: true })).status).toBe(200);
    const held = await op("GET", `/queue?outbound_account_id=${outbound.id}&state=held`);
    expect(held.body.map((e: { recipient: string }) => e.recipient)).toEqual(["api-queued@example.org"]);
    const refused = await call("GET", `/api/v0.1/${account.id}/addresses`, token);
    expect(refused.status).toBe(403);
    expect(refused.body.error).toStartWith("Forbidden: this account is suspended");
    expect((await e11("while-suspended")).status).toBe(403);
    const submitted = await submit("while-suspended");
    expect(submitted.response).toStartWith("550 5.7.1 this account is suspended");
    const mail = await inbound(email, "while suspended");
    expect(mail.response).toStartWith("550 5.7.1");
    expect(target.at("/tenant")).toHaveLength(1);
    // Past its send_at, the held message has not gone out (before: delivered while suspended).
    await Bun.sleep(Math.max(0, Date.parse(sendAt) + 1_500 - Date.now()));
    expect(sink.to("api-queued@example.org")).toHaveLength(0);
    expect((await op("PATCH", `/accounts/${account.id}`, { suspended: false })).status).toBe(200);
    await eventually(() => sink.to("api-queued@example.org").length === 1, 10_000, "the held message delivered once resumed");
    expect((await call("GET", `/api/v0.1/${account.id}/addresses`, token)).status).toBe(200);
    expect((await e11("after-suspension")).status).toBe(202);
  }, 30_000);

  test("a restart keeps the account, its tokens, outbound account and address; a revoked token stays revoked", async () => {
    const minted = await op("POST", `/accounts/${account.id}/api_tokens`, {});
    revoked = minted.body.token;
    expect((await op("DELETE", `/accounts/${account.id}/api_tokens/${minted.body.id}`)).status).toBe(202);
    expect((await call("GET", `/api/v0.1/${account.id}/addresses`, revoked)).status).toBe(401);
    await stop();
    await start();
    expect((await call("GET", `/api/v0.1/${account.id}/addresses`, token)).body.map((a: { email: string }) => a.email)).toEqual([email]);
    expect((await call("GET", `/api/v0.1/${account.id}/addresses`, readToken)).status).toBe(200);
    expect((await call("POST", `/api/v0.1/${account.id}/addresses`, readToken, {})).status).toBe(403);
    expect((await call("GET", `/api/v0.1/${account.id}/addresses`, revoked)).status).toBe(401);
    expect((await inbound(email, "after the restart")).code).toBe(250);
    expect((await submit("after-restart")).code).toBe(250);
    const listed = (await op("GET", `/accounts/${account.id}`)).body;
    expect(listed).toMatchObject({ name: "Tenant One", source: "api", suspended: false });
    expect(listed.outbound_accounts).toMatchObject([{ id: outbound.id, name: "app", ip_pool: "shared" }]);
    const audit = (await op("GET", `/audit?account_id=${account.id}`)).body.map((e: { action: string }) => e.action);
    expect(audit).toContain("account.create");
    expect(audit).toContain("api_token.revoke");
  }, 60_000);

  test("a config account is listed as such and cannot be changed through the API (409)", async () => {
    const list = (await op("GET", "/accounts")).body;
    expect(list.find((a: { id: string }) => a.id === ACCOUNT_A.id)).toMatchObject({ source: "config" });
    expect((await op("PATCH", `/accounts/${ACCOUNT_A.id}`, { name: "renamed" })).status).toBe(409);
    expect((await op("DELETE", `/accounts/${ACCOUNT_A.id}`)).status).toBe(409);
    expect((await call("GET", `/api/v0.1/${ACCOUNT_A.id}/addresses`, ACCOUNT_A.token)).status).toBe(200);
  });

  test("deleting the account refuses its token, its key and its mail at once; a second delete is 404", async () => {
    expect((await op("DELETE", `/accounts/${account.id}`)).status).toBe(202);
    expect((await call("GET", `/api/v0.1/${account.id}/addresses`, token)).status).toBe(401);
    expect((await e11("after-deletion")).status).toBe(401);
    expect((await submit("after-deletion")).response).toStartWith("535");
    expect((await inbound(email, "after the deletion")).response).toStartWith("550 5.1.1");
    const again = await op("DELETE", `/accounts/${account.id}`);
    expect(again.status).toBe(404);
    expect(again.body.error).toContain(`no account ${account.id}`);
  });
});
