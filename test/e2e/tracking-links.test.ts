// Click-tracking links expire (issue 14, point 10): they redirect and record for
// outbound.tracking_link_ttl after their message was accepted, then answer 410 Gone with a
// short page and record nothing. Links issued before links carried an expiry count from
// their message's acceptance, and are gone once the message is no longer kept.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { ManualClock } from "../../src/lib/clock.ts";
import { createOutboundRepo } from "../../src/outbound/queue/queue.repo.ts";
import { queuePorts } from "../../src/outbound/queue/wiring.ts";
import { NO_TRACKING } from "../../src/outbound/queue/message.ts";
import { bearer, startTestApp, type TestApp } from "../helpers/app.ts";
import { TestDnsServer } from "../helpers/dns-server.ts";
import { ACCOUNT_A } from "../helpers/fixtures.ts";
import { SENDING_KEYS, verifiedSendingDomain } from "../helpers/sending-domain.ts";
import { eventually, SmtpSink, routeToSink } from "../helpers/sink.ts";
import { tempDir } from "../helpers/tmp.ts";

const DAY = 86_400_000;
const TTL_DAYS = 30;
// Tokens an earlier Postroom issued with this data_dir's tracking key (32 bytes of 0x2a):
// for message 0e77…aa / recipient r000000000000001, and for 0e77…bb, a message no longer kept.
const LEGACY_KEPT =
  "eyJtIjoiMGU3NzAwMDAtMDAwMC00MDAwLTgwMDAtMDAwMDAwMDAwMGFhIiwiciI6InIwMDAwMDAwMDAwMDAwMDEiLCJ1IjoiaHR0cHM6Ly9leGFtcGxlLmNvbS9vbGQtbmV3c2xldHRlciJ9.fjyb3p7XRu91lmzxS72rVQ";
const LEGACY_PURGED =
  "eyJtIjoiMGU3NzAwMDAtMDAwMC00MDAwLTgwMDAtMDAwMDAwMDAwMGJiIiwiciI6InIwMDAwMDAwMDAwMDAwMDIiLCJ1IjoiaHR0cHM6Ly9leGFtcGxlLmNvbS9vbGQtbmV3c2xldHRlciJ9.TC-NNhmBZriCd2aHS22kZA";

const clock = new ManualClock(Date.now());
const dir = tempDir();
let t: TestApp;
let dns: TestDnsServer;
let sink: SmtpSink;

const sent = async (id: string) =>
  (await t.json("GET", `/api/v0.1/${ACCOUNT_A.id}/outbound_messages/${id}`, { auth: bearer(ACCOUNT_A.token) })).body;
const clicks = async (id: string) => (await sent(id)).recipients[0].events.filter((e: any) => e.kind === "click").length;
const click = (path: string) => t.call("GET", path, { headers: { "user-agent": "Browser/1.0" } });

beforeAll(async () => {
  mkdirSync(join(dir.path, "keys"), { recursive: true, mode: 0o700 });
  writeFileSync(join(dir.path, "keys", "tracking.key"), Buffer.alloc(32, 0x2a), { mode: 0o600 });
  sink = await SmtpSink.start();
  dns = await TestDnsServer.start();
  routeToSink(dns, "example.org");
  t = await startTestApp({
    dataDir: dir.path,
    clock,
    dnsServer: dns.address,
    accounts: [{ ...ACCOUNT_A, extra: "tracking = { clicks = true }" }],
    outbound: `${SENDING_KEYS}\nmx_port = ${sink.port}\nallow_private_mx = true\ntracking_link_ttl = "${TTL_DAYS}d"`,
  });
  await verifiedSendingDomain(t, dns, ACCOUNT_A, "sender.test");
});
afterAll(async () => {
  await t.stop();
  await sink.stop();
  await dns.stop();
  dir.remove();
});

describe("click links expire", () => {
  test("a link redirects and records until tracking_link_ttl after its message was accepted, then 410 Gone, recording nothing", async () => {
    const res = await t.json("POST", `/api/v0.1/${ACCOUNT_A.outboundId}/messages`, {
      auth: bearer(ACCOUNT_A.smtpKey),
      body: {
        from: "ann@sender.test",
        to: "reader@example.org",
        subject: "news",
        html: '<p><a href="https://example.com/article">read</a></p>',
      },
    });
    expect(res.status).toBe(202);
    const id = res.body.id;
    await eventually(() => sink.to("reader@example.org").length === 1, 10_000, "the copy");
    const raw = sink.to("reader@example.org")[0]!.raw.replace(/=\r\n/g, "").replace(/=3D/g, "=");
    const path = new URL(/<a href="(http:\/\/127\.0\.0\.1:8080\/t\/c\/[^"]+)"/.exec(raw)![1]!).pathname;

    const first = await click(path);
    expect(first.status).toBe(302);
    expect(first.headers.get("location")).toBe("https://example.com/article");
    clock.advance(TTL_DAYS * DAY - 60_000);
    expect((await click(path)).status).toBe(302);
    expect(await clicks(id)).toBe(2);

    clock.advance(2 * 60_000);
    const gone = await click(path);
    expect(gone.status).toBe(410);
    expect(gone.headers.get("location")).toBeNull();
    expect(gone.headers.get("content-type")).toBe("text/html; charset=utf-8");
    expect(await gone.text()).toContain("This link has expired.");
    expect(await clicks(id)).toBe(2);
  });

  test("a link issued before links carried an expiry works for tracking_link_ttl after its message was accepted; one whose message is gone is 410", async () => {
    const id = "0e770000-0000-4000-8000-0000000000aa";
    const now = clock.nowMs();
    const repo = createOutboundRepo(t.app.store, queuePorts(t.app.store));
    const message = {
      id,
      accountId: ACCOUNT_A.id,
      outboundAccountId: ACCOUNT_A.outboundId,
      from: "ann@sender.test",
      subject: "old newsletter",
      messageId: "<old@x>",
      to: ["old@example.org"],
      cc: [],
      tags: [],
      testMode: false,
      priority: "standard" as const,
      sizeBytes: 1,
      tracking: { ...NO_TRACKING, clicks: true },
      createdAtMs: now,
    };
    const recipient = {
      id: "r000000000000001",
      messageId: id,
      position: 0,
      email: "old@example.org",
      domain: "example.org",
      type: "to" as const,
      status: "delivery" as const,
      state: "done" as const,
      lane: 1,
      attempts: 1,
      firstAttemptAtMs: now,
      nextAttemptAtMs: now,
    };
    await repo.insert(message, [recipient], [], { raw: Buffer.from("From: ann@sender.test\r\n\r\nx\r\n") });

    const ok = await click(`/t/c/${LEGACY_KEPT}`);
    expect(ok.status).toBe(302);
    expect(ok.headers.get("location")).toBe("https://example.com/old-newsletter");
    expect(await clicks(id)).toBe(1);
    expect((await click(`/t/c/${LEGACY_PURGED}`)).status).toBe(410);

    clock.advance(TTL_DAYS * DAY);
    expect((await click(`/t/c/${LEGACY_KEPT}`)).status).toBe(410);
    expect(await clicks(id)).toBe(1);
    // A forged token is still 404, as before.
    expect((await click(`/t/c/${LEGACY_KEPT.slice(0, -2)}AA`)).status).toBe(404);
  });
});
