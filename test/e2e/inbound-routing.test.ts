// Who may receive mail here, decided at RCPT time, and the limits every message and
// connection is held to; the connection survives every refusal but the last.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { reply } from "../../src/smtp/reply.ts";
import { bearer, startTestApp, type TestApp } from "../helpers/app.ts";
import { ACCOUNT_A } from "../helpers/fixtures.ts";
import { sendWithNodemailer } from "../helpers/smtp.ts";
import { SmtpSession } from "../helpers/smtp-session.ts";
import { TestTarget } from "../helpers/target.ts";

const A = `/api/v0.1/${ACCOUNT_A.id}`;
const auth = bearer(ACCOUNT_A.token);
const UUID = "3f2504e0-4f89-41d3-9a0c-0305e82c3301";

let t: TestApp;
let target: TestTarget;
const bounced: { rcptTo: string[]; raw: string }[] = [];

async function addressFor(path: string) {
  const res = await t.json("POST", `${A}/addresses`, { auth, body: { target: target.url(path), target_format: "json+n" } });
  return res.body as { id: string; email: string };
}

const message = (subject: string, body = "hello") =>
  `From: alice@sender.test\r\nTo: someone@example.org\r\nSubject: ${subject}\r\n\r\n${body}\r\n`;

async function session() {
  const { session, greeting } = await SmtpSession.open(t.app.inboundPort!);
  expect(greeting).toStartWith("220 mx.postroom.test");
  await session.command("EHLO client.example.org");
  return session;
}

beforeAll(async () => {
  target = TestTarget.start();
  t = await startTestApp({
    inbound: true,
    accounts: [{ ...ACCOUNT_A, extra: "domain_targets = true" }],
    smtp: 'max_message_size = "64KB"\nmax_header_size = "4KB"\nmax_mime_depth = 5\nmax_recipients = 3\nmax_unknown_recipients = 3',
    bounces: {
      checkRecipient: async (address) => (address.includes(UUID) ? null : reply(550, "5.1.1", "unknown bounce address")),
      receive: async (raw, envelope) => {
        bounced.push({ rcptTo: envelope.rcptTo, raw: raw.toString() });
        return reply(250, "2.0.0", "Bounce recorded");
      },
    },
  });
});
afterAll(async () => {
  await t.stop();
  await target.stop();
});

describe("EHLO", () => {
  test("advertises SIZE, 8BITMIME, SMTPUTF8, PIPELINING and ENHANCEDSTATUSCODES; no AUTH, no STARTTLS without a certificate", async () => {
    const { session } = await SmtpSession.open(t.app.inboundPort!);
    try {
      const ehlo = await session.command("EHLO client.example.org");
      const extensions = ehlo.split("\n").map((l) => l.slice(4));
      for (const ext of ["SIZE 65536", "8BITMIME", "SMTPUTF8", "PIPELINING", "ENHANCEDSTATUSCODES"]) expect(extensions).toContain(ext);
      expect(ehlo).not.toContain("AUTH");
      expect(ehlo).not.toContain("STARTTLS");
      expect(await session.command("AUTH PLAIN AGFAYg==")).toBe("500 5.5.2 Error: command not recognized");
    } finally {
      await session.close();
    }
  });
});

describe("recipients", () => {
  test("addresses, sub-addresses, unknown addresses and foreign domains", async () => {
    const addr = await addressFor("/routing");
    const s = await session();
    expect(await s.command("MAIL FROM:<alice@sender.test>")).toStartWith("250");
    expect(await s.command(`RCPT TO:<${addr.email}>`)).toBe("250 2.1.5 Accepted");
    expect(await s.command(`RCPT TO:<${addr.id}+tag@in.postroom.test>`)).toBe("250 2.1.5 Accepted");
    expect(await s.command("RCPT TO:<00000000000000000000@in.postroom.test>")).toBe("550 5.1.1 no such recipient here");
    expect(await s.command("RCPT TO:<someone@gmail.com>")).toBe("550 5.7.1 relay not permitted");
    expect(await s.data(message("routing"))).toBe("250 2.0.0 Accepted");
    await s.close();
    expect(target.at("/routing").at(-1)!.json.envelope.recipients).toEqual([addr.email, `${addr.id}+tag@in.postroom.test`]);
  });

  test("a deleted address is unknown at once, even right after mail reached it", async () => {
    const addr = await addressFor("/deleted");
    const send = () => sendWithNodemailer(t.app.inboundPort!, { from: "alice@sender.test", to: addr.email, subject: "x", text: "x" });
    expect((await send()).response).toBe("250 2.0.0 Accepted");
    expect((await t.json("DELETE", `${A}/addresses/${addr.id}`, { auth })).status).toBe(202);
    expect((await send()).response).toBe("550 5.1.1 no such recipient here");
  });

  test("a changed target takes the next message at once", async () => {
    const addr = await addressFor("/before-change");
    const send = (subject: string) =>
      sendWithNodemailer(t.app.inboundPort!, { from: "alice@sender.test", to: addr.email, subject, text: "x" });
    expect((await send("first")).response).toBe("250 2.0.0 Accepted");
    expect((await t.json("PATCH", `${A}/addresses/${addr.id}`, { auth, body: { target: target.url("/after-change") } })).status).toBe(200);
    expect((await send("second")).response).toBe("250 2.0.0 Accepted");
    expect(target.at("/before-change").map((r) => r.json.headers.subject)).toEqual(["first"]);
    expect(target.at("/after-change").map((r) => r.json.headers.subject)).toEqual(["second"]);
  });

  test("a custom domain takes any local part, unless auth_regex says otherwise; domain_target replaces the target", async () => {
    const addr = await addressFor("/address-target");
    await t.json("POST", `${A}/custom_domains?address_id=${addr.id}`, { auth, body: { domain: "catchall.example" } });
    await t.json("POST", `${A}/custom_domains?address_id=${addr.id}`, {
      auth,
      body: { domain: "strict.example", auth_regex: "(sales|support)@strict\\.example", domain_target: target.url("/domain-target") },
    });
    const s = await session();
    await s.command("MAIL FROM:<alice@sender.test>");
    expect(await s.command("RCPT TO:<anything.at.all@CatchAll.example>")).toBe("250 2.1.5 Accepted");
    expect(await s.data(message("catch-all"))).toBe("250 2.0.0 Accepted");
    await s.command("MAIL FROM:<alice@sender.test>");
    expect(await s.command("RCPT TO:<billing@strict.example>")).toBe("550 5.1.1 recipient does not match the regexp");
    expect(await s.command("RCPT TO:<Sales@strict.example>")).toBe("250 2.1.5 Accepted");
    expect(await s.data(message("strict"))).toBe("250 2.0.0 Accepted");
    await s.close();
    expect(target.at("/address-target").map((r) => r.json.headers.subject)).toEqual(["catch-all"]);
    expect(target.at("/domain-target").map((r) => r.json.headers.subject)).toEqual(["strict"]);
    const statuses = (await t.json("GET", `${A}/incoming_statuses?address_id=${addr.id}`, { auth })).body;
    // Sorted: statuses recorded within the same millisecond have no defined order.
    expect(statuses.map((x: any) => [x.to, x.status, x.response]).sort()).toEqual([
      ["Sales@strict.example", "200", null],
      ["anything.at.all@CatchAll.example", "200", null],
      ["billing@strict.example", "rejected", "550 5.1.1 recipient does not match the regexp"],
    ]);
  });

  test("bounce addresses go to the bounce handler; forged ones are refused", async () => {
    const s = await session();
    await s.command("MAIL FROM:<>");
    expect(await s.command(`RCPT TO:<bounces+${UUID}-abc123@mta.customer.example>`)).toBe("250 2.1.5 Accepted");
    expect(await s.command("RCPT TO:<bounces+00000000-0000-4000-8000-000000000000-abc@mta.customer.example>")).toBe(
      "550 5.1.1 unknown bounce address",
    );
    expect(await s.data(message("Delivery Status Notification (Failure)"))).toBe("250 2.0.0 Bounce recorded");
    await s.close();
    expect(bounced.at(-1)!.rcptTo).toEqual([`bounces+${UUID}-abc123@mta.customer.example`]);
  });
});

describe("limits", () => {
  test("a message over max_message_size is refused with 552 and the connection goes on", async () => {
    const addr = await addressFor("/limits");
    const s = await session();
    await s.command("MAIL FROM:<alice@sender.test>");
    await s.command(`RCPT TO:<${addr.email}>`);
    expect(await s.data(message("too big", "x".repeat(100) + "\r\n".repeat(1) + ("y".repeat(998) + "\r\n").repeat(80)))).toBe(
      "552 5.3.4 message exceeds the size limit of 65536 bytes",
    );
    await s.command("MAIL FROM:<alice@sender.test>");
    await s.command(`RCPT TO:<${addr.email}>`);
    expect(await s.data(message("small after big"))).toBe("250 2.0.0 Accepted");
    await s.close();
    const statuses = (await t.json("GET", `${A}/incoming_statuses?address_id=${addr.id}`, { auth })).body;
    expect(statuses.map((x: any) => [x.status, x.status_category])).toEqual([
      ["200", "successful"],
      ["rejected", "rejected"],
    ]);
    expect(statuses[1].response).toBe("552 5.3.4 message exceeds the size limit of 65536 bytes");
    expect(target.at("/limits").map((r) => r.json.headers.subject)).toEqual(["small after big"]);
  });

  test("MAIL FROM with a SIZE over the limit is refused before any data", async () => {
    const s = await session();
    expect(await s.command("MAIL FROM:<alice@sender.test> SIZE=100000")).toStartWith("552 5.3.4");
    await s.close();
  });

  test("a header section over max_header_size: 552", async () => {
    const addr = await addressFor("/limits");
    const s = await session();
    await s.command("MAIL FROM:<alice@sender.test>");
    await s.command(`RCPT TO:<${addr.email}>`);
    const headers = Array.from({ length: 80 }, (_, i) => `X-Filler-${i}: ${"z".repeat(60)}`).join("\r\n");
    expect(await s.data(`${headers}\r\nSubject: header bomb\r\n\r\nbody\r\n`)).toBe("552 5.3.4 message header is larger than 4096 bytes");
    await s.close();
  });

  test("MIME nesting deeper than max_mime_depth: 554", async () => {
    const addr = await addressFor("/limits");
    let body = "Content-Type: text/plain\r\n\r\ninnermost\r\n";
    for (let i = 0; i < 8; i++) body = `Content-Type: multipart/mixed; boundary="b${i}"\r\n\r\n--b${i}\r\n${body}--b${i}--\r\n`;
    const s = await session();
    await s.command("MAIL FROM:<alice@sender.test>");
    await s.command(`RCPT TO:<${addr.email}>`);
    expect(await s.data(`Subject: deep\r\nMIME-Version: 1.0\r\n${body}`)).toBe("554 5.6.0 message nests MIME parts deeper than 5 levels");
    await s.close();
  });

  test("more recipients than max_recipients: 452 for the extra ones", async () => {
    const addrs = await Promise.all([1, 2, 3, 4].map(() => addressFor("/limits")));
    const s = await session();
    await s.command("MAIL FROM:<alice@sender.test>");
    const replies = [];
    for (const a of addrs) replies.push(await s.command(`RCPT TO:<${a.email}>`));
    expect(replies.map((r) => r.slice(0, 3))).toEqual(["250", "250", "250", "452"]);
    await s.close();
  });

  test("a client probing for addresses is cut off after max_unknown_recipients refusals", async () => {
    const s = await session();
    await s.command("MAIL FROM:<alice@sender.test>");
    const replies = [];
    for (let i = 0; i < 5; i++) replies.push(await s.command(`RCPT TO:<guess${i}@gmail.com>`));
    expect(replies.map((r) => r.slice(0, 3))).toEqual(["550", "550", "550", "421", "(co"]);
    expect(replies[3]).toBe("421 4.7.0 too many refused recipients; closing connection");
    expect(s.closed).toBe(true);
  });
});
