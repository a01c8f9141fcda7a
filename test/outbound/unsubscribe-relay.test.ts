// What Postroom passes on to an account's unsubscribe.url once it has checked the signed
// List-Unsubscribe URL (issue 31, finding 8).
import { describe, expect, test } from "bun:test";
import { createHmac } from "node:crypto";
import type { AccountConfig, OutboundAccountConfig, WebhookConfig } from "../../src/config/config.ts";
import { relayRequest, relayTargetOf } from "../../src/outbound/tracking/unsubscribe-relay.ts";

const TARGET = {
  messageId: "2f344b0c-b0aa-43c1-9b48-eb72bb3c6032",
  recipientId: "r1",
  outboundAccountId: "o1",
  recipient: "carol+news@example.net",
};
const SECRET = `whsec_${Buffer.alloc(32, 3).toString("base64")}`;
const hook = (token: string, signingSecret: string | null = null): WebhookConfig => ({
  url: "https://app.example.com/events",
  token,
  signingSecret,
});

describe("relayRequest", () => {
  test("the message and recipient in the query (kept from the app's own) and in the form body", () => {
    const r = relayRequest("https://app.example.com/unsub?list=news", TARGET, null, 1_700_000_000_000, "Postroom/test");
    const url = new URL(r.url);
    expect(url.origin + url.pathname).toBe("https://app.example.com/unsub");
    expect(Object.fromEntries(url.searchParams)).toEqual({ list: "news", message_id: TARGET.messageId, recipient: TARGET.recipient });
    expect(Object.fromEntries(new URLSearchParams(r.body))).toEqual({
      "List-Unsubscribe": "One-Click",
      message_id: TARGET.messageId,
      recipient: TARGET.recipient,
    });
    expect(r.headers).toEqual({ "content-type": "application/x-www-form-urlencoded", "user-agent": "Postroom/test" });
  });

  test.each([
    // webhook → authorization, signed?
    [null, undefined, false],
    [hook("t1"), "Bearer t1", false],
    [hook("t2", SECRET), "Bearer t2", true],
  ])("webhook %p: authorization %p, signed %p", (webhook, authorization, signed) => {
    const r = relayRequest("https://app.example.com/unsub", TARGET, webhook, 1_700_000_000_000, "Postroom/test");
    expect(r.headers.authorization).toBe(authorization);
    expect(r.headers["webhook-signature"] !== undefined).toBe(signed);
    if (signed) {
      expect(r.headers["webhook-timestamp"]).toBe("1700000000");
      const key = Buffer.from(SECRET.slice(6), "base64");
      const expected = createHmac("sha256", key)
        .update(`${r.headers["webhook-id"]}.${r.headers["webhook-timestamp"]}.${r.body}`)
        .digest("base64");
      expect(r.headers["webhook-signature"]).toBe(`v1,${expected}`);
    }
  });
});

describe("relayTargetOf", () => {
  const account = (url: string, webhook: WebhookConfig | null) =>
    ({ unsubscribe: { url: url || null, mailto: null }, webhook }) as unknown as AccountConfig;
  const outbound = (webhook: WebhookConfig | null) => ({ webhook }) as unknown as OutboundAccountConfig;
  test.each([
    // account url, account webhook, outbound webhook → the webhook that signs (null: no relay at all)
    ["https://app/u", hook("acct"), null, { url: "https://app/u", webhook: hook("acct") }],
    ["https://app/u", hook("acct"), hook("own"), { url: "https://app/u", webhook: hook("own") }],
    ["https://app/u", null, null, { url: "https://app/u", webhook: null }],
    ["", hook("acct"), null, null],
  ])("url %p, account webhook %p, outbound webhook %p → %p", (url, accountHook, outboundHook, expected) => {
    expect(relayTargetOf({ account: account(url, accountHook), outbound: outbound(outboundHook) })).toEqual(expected);
  });
  test("an outbound account no longer configured: nothing", () => expect(relayTargetOf(undefined)).toBeNull());
});
