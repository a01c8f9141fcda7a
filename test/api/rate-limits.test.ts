// Rate limits (docs/api.md) through the API: the default management limit is 5 calls a minute.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { ManualClock } from "../../src/lib/clock.ts";
import { bearer, startTestApp, type TestApp } from "../helpers/app.ts";
import { ACCOUNT_A, ACCOUNT_B, accountToml } from "../helpers/fixtures.ts";

const clock = new ManualClock(Date.parse("2026-11-22T10:00:00Z"));
let t: TestApp;
beforeAll(async () => {
  // Account A keeps the default limit (the key is left out of its config).
  t = await startTestApp({
    clock,
    accounts: [
      { ...ACCOUNT_A, rateLimit: "default" },
      { ...ACCOUNT_B, sendRateLimit: "2/min" },
    ],
  });
});
afterAll(() => t.stop());

describe("management rate limit", () => {
  test("the default is 5 per minute", () => {
    expect(accountToml({ ...ACCOUNT_A, rateLimit: "default" })).not.toMatch(/^rate_limit =/m);
    expect(t.app.config.accounts[0]!.rateLimit).toEqual({ limit: 5, windowMs: 60_000 });
  });

  test("the 6th call within a minute is 429 with Retry-After; every answer carries RateLimit-*", async () => {
    const path = `/api/v0.1/${ACCOUNT_A.id}/addresses`;
    const seen: [number, string | null][] = [];
    for (let i = 0; i < 5; i++) {
      clock.advance(1000);
      const res = await t.call("GET", path, { auth: bearer(ACCOUNT_A.token) });
      seen.push([res.status, res.headers.get("ratelimit-remaining")]);
      expect(res.headers.get("ratelimit-limit")).toBe("5");
      expect(Number(res.headers.get("ratelimit-reset"))).toBeGreaterThan(0);
    }
    expect(seen).toEqual([
      [200, "4"],
      [200, "3"],
      [200, "2"],
      [200, "1"],
      [200, "0"],
    ]);
    clock.advance(1000);
    const sixth = await t.call("GET", path, { auth: bearer(ACCOUNT_A.token) });
    expect(sixth.status).toBe(429);
    expect(await sixth.json()).toEqual({
      status: 429,
      error: `Too Many Requests: account ${ACCOUNT_A.id} allows 5 calls per minute (accounts.rate_limit); retry after 55 s`,
    });
    expect(sixth.headers.get("retry-after")).toBe("55");
    expect(sixth.headers.get("ratelimit-remaining")).toBe("0");

    // Another account is not affected; after the wait the account may call again.
    expect((await t.call("GET", `/api/v0.1/${ACCOUNT_B.id}/addresses`, { auth: bearer(ACCOUNT_B.token) })).status).toBe(200);
    clock.advance(55_000);
    expect((await t.call("GET", path, { auth: bearer(ACCOUNT_A.token) })).status).toBe(200);
  });

  test("failed authentication does not spend the account's calls", async () => {
    const res = await t.call("GET", `/api/v0.1/${ACCOUNT_A.id}/addresses`, { auth: bearer("wrong") });
    expect(res.status).toBe(401);
    expect(res.headers.get("ratelimit-limit")).toBeNull();
  });
});

describe("send rate limit", () => {
  test("the call past send_rate_limit is 429 naming the outbound account, its limit and the key", async () => {
    const path = `/api/v0.1/${ACCOUNT_B.outboundId}/messages`;
    const send = () =>
      t.json("POST", path, { auth: bearer(ACCOUNT_B.smtpKey), body: { from: "ann@sender.test", to: "x@example.org", plain: "x" } });
    expect((await send()).status).not.toBe(429);
    expect((await send()).status).not.toBe(429);
    const third = await send();
    expect(third.status).toBe(429);
    expect(third.body.error).toBe(
      `Too Many Requests: outbound account ${ACCOUNT_B.outboundId} allows 2 calls per minute (accounts.outbound.send_rate_limit); retry after 60 s`,
    );
    expect(third.headers.get("retry-after")).toBe("60");
  });
});
