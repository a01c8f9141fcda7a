// GET /stats (the dashboard's overview) after real inbound mail: counts by outcome in the
// right hour, the account's own only, the warning for refused mail, and the period checks.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { ManualClock } from "../../src/lib/clock.ts";
import { bearer, startTestApp, type TestApp } from "../helpers/app.ts";
import { ACCOUNT_A, ACCOUNT_B } from "../helpers/fixtures.ts";
import { sendWithNodemailer } from "../helpers/smtp.ts";
import { TestTarget } from "../helpers/target.ts";

const clock = new ManualClock(Date.parse("2026-11-24T10:30:00Z"));
let t: TestApp;
let target: TestTarget;
const stats = (account: { id: string; token: string }, query = "") =>
  t.json("GET", `/api/v0.1/${account.id}/stats${query}`, { auth: bearer(account.token) });

async function address(account: { id: string; token: string }, path: string): Promise<string> {
  const r = await t.json("POST", `/api/v0.1/${account.id}/addresses`, {
    auth: bearer(account.token),
    body: { target: target.url(path), target_format: "json+n" },
  });
  return r.body.email;
}

beforeAll(async () => {
  target = TestTarget.start();
  target.answers.set("/refuse", { status: 422, body: "no" });
  target.answers.set("/later", { status: 503, body: "later" });
  t = await startTestApp({ clock, inbound: true, accounts: [ACCOUNT_A, ACCOUNT_B] });
  const ok = await address(ACCOUNT_A, "/in");
  const refuse = await address(ACCOUNT_A, "/refuse");
  const later = await address(ACCOUNT_A, "/later");
  const other = await address(ACCOUNT_B, "/in");
  for (const to of [ok, ok, refuse, later, other])
    await sendWithNodemailer(t.app.inboundPort!, { from: "alice@sender.test", to, subject: "s", text: "x" });
  clock.advance(3_600_000);
  await sendWithNodemailer(t.app.inboundPort!, { from: "alice@sender.test", to: ok, subject: "s", text: "x" });
});
afterAll(async () => {
  await t.stop();
  await target.stop();
});

describe("GET /stats", () => {
  test("the last 24 hours by hour: each message in its hour by outcome, the account's own only", async () => {
    const r = await stats(ACCOUNT_A);
    expect(r.status).toBe(200);
    expect(r.body.period).toBe("24h");
    expect(r.body.bucket_seconds).toBe(3600);
    expect(r.body.buckets.length).toBe(24);
    expect(r.body.buckets.at(-1)).toEqual({
      at: "2026-11-24T11:00:00.000Z",
      inbound: { successful: 1, rejected: 0, delayed: 0 },
      outbound: { delivery: 0, bounce: 0, deferral: 0, open: 0, click: 0 },
    });
    expect(r.body.buckets.at(-2).inbound).toEqual({ successful: 2, rejected: 1, delayed: 1 });
    expect(r.body.totals.inbound).toEqual({ successful: 3, rejected: 1, delayed: 1 });
    expect(r.body.queue).toEqual({ recipients: 0 });
    expect(r.body.webhook_backlog).toEqual({ events: 0, oldest_at: null });
    expect(r.body.warnings).toEqual(["2 received messages were not accepted by their targets in this period"]);
    expect((await stats(ACCOUNT_B)).body.totals.inbound).toEqual({ successful: 1, rejected: 0, delayed: 0 });
  });

  test("the last 7 days in buckets of 6 hours", async () => {
    const r = await stats(ACCOUNT_A, "?period=7d");
    expect(r.body.bucket_seconds).toBe(21600);
    expect(r.body.buckets.length).toBe(28);
    expect(r.body.buckets.at(-1)).toMatchObject({ at: "2026-11-24T06:00:00.000Z", inbound: { successful: 3, rejected: 1, delayed: 1 } });
  });

  test("an unknown period is 422 with a sentence; another account's stats are 403", async () => {
    expect(await stats(ACCOUNT_A, "?period=1y")).toMatchObject({
      status: 422,
      body: { status: 422, error: expect.stringContaining('must be "24h" or "7d"') },
    });
    expect((await t.json("GET", `/api/v0.1/${ACCOUNT_B.id}/stats`, { auth: bearer(ACCOUNT_A.token) })).status).toBe(403);
  });
});
