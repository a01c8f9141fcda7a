// Submission refusals name what fixes them (issue 37): a wrong login names the username
// and password to use, the send rate limit names the outbound account, its limit and the key.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { startTestApp, type TestApp } from "../helpers/app.ts";
import { ACCOUNT_A } from "../helpers/fixtures.ts";
import { SmtpSession } from "../helpers/smtp-session.ts";

const plain = (user: string, pass: string) => Buffer.from(`\0${user}\0${pass}`).toString("base64");
let t: TestApp;
beforeAll(async () => {
  t = await startTestApp({ submission: true, accounts: [{ ...ACCOUNT_A, sendRateLimit: "1/min" }] });
});
afterAll(() => t.stop());

describe("submission refusals", () => {
  test("a wrong password: 535 5.7.8 naming the username and the password to use", async () => {
    const { session } = await SmtpSession.open(t.app.submissionPort!);
    try {
      await session.command("EHLO client.example.org");
      expect(await session.command(`AUTH PLAIN ${plain(ACCOUNT_A.outboundId, "pr_wrong")}`)).toBe(
        "535 5.7.8 authentication failed: the username is the outbound account's id (accounts.outbound.id), the password its key (accounts.outbound.api_keys)",
      );
    } finally {
      await session.close();
    }
  });

  test("past send_rate_limit: 450 4.7.1 naming the outbound account, its limit and the key", async () => {
    const { session } = await SmtpSession.open(t.app.submissionPort!);
    try {
      await session.command("EHLO client.example.org");
      expect(await session.command(`AUTH PLAIN ${plain(ACCOUNT_A.outboundId, ACCOUNT_A.smtpKey)}`)).toStartWith("235");
      expect(await session.command("MAIL FROM:<ann@sender.test>")).toStartWith("250");
      expect(await session.command("RSET")).toStartWith("250");
      expect(await session.command("MAIL FROM:<ann@sender.test>")).toBe(
        `450 4.7.1 sending rate limit reached: outbound account ${ACCOUNT_A.outboundId} allows 1 call per minute (accounts.outbound.send_rate_limit); try again in 60 s`,
      );
    } finally {
      await session.close();
    }
  });
});
