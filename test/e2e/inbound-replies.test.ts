// The target's answer decides the SMTP reply, and every outcome is an incoming status
// (docs/receiving.md): real SMTP in, a real HTTP target out.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { bearer, startTestApp, type TestApp } from "../helpers/app.ts";
import { TestDnsServer } from "../helpers/dns-server.ts";
import { ACCOUNT_A } from "../helpers/fixtures.ts";
import { sendWithNodemailer } from "../helpers/smtp.ts";
import { TestTarget } from "../helpers/target.ts";

const A = `/api/v0.1/${ACCOUNT_A.id}`;
const auth = bearer(ACCOUNT_A.token);

let t: TestApp;
let target: TestTarget;
let dns: TestDnsServer;
let closedPort: number;

async function addressFor(url: string) {
  const res = await t.json("POST", `${A}/addresses`, { auth, body: { target: url, target_format: "json+n" } });
  expect(res.status).toBe(201);
  return res.body as { id: string; email: string };
}

const send = (to: string | string[], subject: string) =>
  sendWithNodemailer(t.app.inboundPort!, { from: "alice@sender.test", to, subject, text: `body of ${subject}` });

const statuses = async (addressId: string, query = "") =>
  (await t.json("GET", `${A}/incoming_statuses?address_id=${addressId}${query ? `&query=${encodeURIComponent(query)}` : ""}`, { auth }))
    .body as any[];

beforeAll(async () => {
  dns = await TestDnsServer.start();
  dns.set("loopback-target.test", [{ type: "A", address: "127.0.0.1" }]);
  target = TestTarget.start();
  target.answers.set("/missing", { status: 404, contentType: "text/plain", body: "No such mailbox here\nsecond line" });
  target.answers.set("/invalid", { status: 422, contentType: "application/json", body: '{"error":"bad"}' });
  target.answers.set("/broken", { status: 500, contentType: "text/html", body: "Internal error: stack trace..." });
  target.answers.set("/busy", { status: 503, contentType: "text/plain", body: "Busy\u0007, come back later" });
  target.answers.set("/slow", { status: 200, delayMs: 2500 });
  target.answers.set("/moved", { status: 308, headers: { location: "/ok" } });
  t = await startTestApp({ inbound: true, dnsServer: dns.address, inboundKeys: 'target_timeout = "1s"' });
  // Taken after the app bound its listeners, so the port it frees is none of theirs.
  const probe = Bun.serve({ hostname: "127.0.0.1", port: 0, fetch: () => new Response("") });
  closedPort = probe.port!;
  probe.stop(true);
});
afterAll(async () => {
  await t.stop();
  await target.stop();
  await dns.stop();
});

describe("reply table", () => {
  test.each([
    ["/ok", "250 2.0.0 Accepted", "200", "successful", null],
    ["/missing", "554 5.1.1 No such mailbox here", "404", "rejected", "No such mailbox here\nsecond line"],
    ["/invalid", "550 5.7.1 Message rejected by the target", "422", "rejected", '{"error":"bad"}'],
    ["/broken", "451 4.3.0 The target failed; try again later", "500", "delayed", "Internal error: stack trace..."],
    ["/busy", "451 4.3.0 Busy, come back later", "503", "delayed", "Busy\u0007, come back later"],
    ["/moved", "250 2.0.0 Accepted", "200", "successful", null],
  ])("target %s: the sender sees %p", async (path, smtp, status, category, response) => {
    const addr = await addressFor(target.url(path));
    const result = await send(addr.email, `to ${path}`);
    expect(result.response).toBe(smtp);
    const [s] = await statuses(addr.id);
    expect(s).toMatchObject({
      address_id: addr.id,
      to: addr.email,
      from: "alice@sender.test",
      subject: `to ${path}`,
      status,
      status_category: category,
      response,
      tls: null,
      remote_ip: "127.0.0.1",
    });
    expect(s.size).toBeGreaterThan(100);
    expect(s.message_id).toMatch(/^[^<>]+@[^<>]+$/);
  });

  test("a target slower than inbound.target_timeout: 451 4.4.7 and client_timeout", async () => {
    const addr = await addressFor(target.url("/slow"));
    const started = performance.now();
    const result = await send(addr.email, "slow");
    expect(result.response).toBe("451 4.4.7 The target did not answer in time; try again later");
    expect(performance.now() - started).toBeLessThan(2400);
    expect((await statuses(addr.id))[0]).toMatchObject({ status: "client_timeout", status_category: "delayed" });
  });

  test("a closed port: 451 4.4.1 and unreachable", async () => {
    const addr = await addressFor(`http://127.0.0.1:${closedPort}/in`);
    const result = await send(addr.email, "closed");
    expect(result.response).toBe("451 4.4.1 The target could not be reached; try again later");
    const [s] = await statuses(addr.id);
    expect(s).toMatchObject({ status: "unreachable", status_category: "delayed" });
    expect(s.response).toContain("ECONNREFUSED");
  });

  test("several addresses: one POST each, and the sender gets the worst reply", async () => {
    const ok = await addressFor(target.url("/ok"));
    const broken = await addressFor(target.url("/broken"));
    const missing = await addressFor(target.url("/missing"));
    const okBefore = target.at("/ok").length;
    expect((await send([ok.email, broken.email], "ok and broken")).response).toStartWith("451 4.3.0");
    expect((await send([ok.email, missing.email, broken.email], "all three")).response).toStartWith("554 5.1.1");
    expect(target.at("/ok").length - okBefore).toBe(2);
    expect((await statuses(ok.id)).map((s) => s.status)).toEqual(["200", "200"]);
  });
});

describe("the egress guard at delivery", () => {
  test("a target name that resolves to loopback is refused when private targets are not allowed", async () => {
    const strict = await startTestApp({ inbound: true, allowPrivateTargets: false, dnsServer: dns.address });
    try {
      const created = await strict.json("POST", `${A}/addresses`, {
        auth,
        body: { target: `http://loopback-target.test:${target.port}/ok`, target_format: "json+n" },
      });
      expect(created.status).toBe(201);
      const before = target.at("/ok").length;
      const result = await sendWithNodemailer(strict.app.inboundPort!, {
        from: "alice@sender.test",
        to: created.body.email,
        subject: "ssrf",
        text: "x",
      });
      expect(result.response).toBe("451 4.4.1 The target could not be reached; try again later");
      expect(target.at("/ok").length).toBe(before);
      const [s] = (await strict.json("GET", `${A}/incoming_statuses?address_id=${created.body.id}`, { auth })).body;
      expect(s.response).toBe(
        "refused by the egress guard: loopback-target.test resolves to 127.0.0.1, a private, loopback or link-local address " +
          `(POST http://loopback-target.test:${target.port}/ok); inbound.allow_private_targets = true allows it (tests and loopback setups only)`,
      );
    } finally {
      await strict.stop();
    }
  });
});

describe("E6: incoming statuses", () => {
  let addr: { id: string; email: string };
  beforeAll(async () => {
    addr = await addressFor(target.url("/ok"));
    for (let i = 0; i < 3; i++) await send(addr.email, `Invoice ${i}`);
    target.answers.set("/flaky", { status: 500 });
    await send(addr.email, "Weekly report");
  });

  test("newest first, with search terms", async () => {
    expect((await statuses(addr.id)).map((s) => s.subject)).toEqual(["Weekly report", "Invoice 2", "Invoice 1", "Invoice 0"]);
    expect((await statuses(addr.id, "invoice")).map((s) => s.subject)).toEqual(["Invoice 2", "Invoice 1", "Invoice 0"]);
    expect(await statuses(addr.id, 'subject:"weekly report" status:200')).toHaveLength(1);
    expect(await statuses(addr.id, "status_category:successful from:alice")).toHaveLength(4);
    expect(await statuses(addr.id, "status:404")).toEqual([]);
    expect(await statuses(addr.id, "created_at:>=2000-01-01")).toHaveLength(4);
    expect(await statuses(addr.id, "created_at:<2000-01-01")).toEqual([]);
    expect(await statuses(addr.id, "*")).toHaveLength(4);
  });

  test("bad queries and foreign addresses are refused", async () => {
    expect((await t.json("GET", `${A}/incoming_statuses?address_id=${addr.id}&query=colour:red`, { auth })).body).toEqual({
      status: 422,
      error: 'query: unknown field "colour" (known: status, status_category, to, from, subject, created_at, x_postroom_message_id)',
    });
    expect((await t.json("GET", `${A}/incoming_statuses?address_id=${addr.id}&query=created_at:%3Esoon`, { auth })).body.error).toBe(
      'query: created_at needs a date such as 2026-11-01, not "soon"',
    );
    expect((await t.json("GET", `${A}/incoming_statuses?address_id=00000000000000000000`, { auth })).status).toBe(404);
  });
});
