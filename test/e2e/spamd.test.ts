// (beyond) inbound.spamd: received mail scored by a real spamd (Debian spamassassin) on
// loopback; the target gets envelope.spamd as the hosted service sends it. A spamd that is
// down or silent never holds mail past inbound.spamd.timeout.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { createServer, type Server, type Socket } from "node:net";
import { bearer, startTestApp, type TestApp } from "../helpers/app.ts";
import { ACCOUNT_A } from "../helpers/fixtures.ts";
import { freePort } from "../helpers/pebble.ts";
import { sendWithNodemailer } from "../helpers/smtp.ts";
import { GTUBE, spamdAvailable, startSpamd, type RunningSpamd } from "../helpers/spamd.ts";
import { TestTarget } from "../helpers/target.ts";
import { requireTools } from "../helpers/tools.ts";

const spamdTest = requireTools("spamd");
let spamd: RunningSpamd | null = null;
let target: TestTarget;
const apps: TestApp[] = [];

beforeAll(async () => {
  target = TestTarget.start();
  if (spamdAvailable()) spamd = await startSpamd();
}, 90_000);
afterAll(async () => {
  for (const a of apps) await a.stop();
  await spamd?.stop();
  await target.stop();
});

async function appliance(address: string, timeout = "2s"): Promise<{ t: TestApp; email: string }> {
  const t = await startTestApp({ inbound: true, inboundKeys: `[inbound.spamd]\naddress = "${address}"\ntimeout = "${timeout}"` });
  apps.push(t);
  const created = await t.json("POST", `/api/v0.1/${ACCOUNT_A.id}/addresses`, {
    auth: bearer(ACCOUNT_A.token),
    body: { target: target.url("/spam"), target_format: "json+n" },
  });
  return { t, email: created.body.email };
}

const lastPayload = () => target.at("/spam").at(-1)!.json;

describe("spam scores from spamd", () => {
  spamdTest(
    "the GTUBE message carries a score above 5 with the GTUBE rule; an ordinary one a low score",
    async () => {
      const { t, email } = await appliance(spamd!.address);
      const spam = await sendWithNodemailer(t.app.inboundPort!, {
        from: "alice@sender.test",
        to: email,
        subject: "offer",
        text: `Buy now\n${GTUBE}\n`,
      });
      expect(spam.response).toStartWith("250");
      const scored = lastPayload().envelope.spamd;
      expect(scored).toMatchObject({ success: true, description: "SpamAssassin score" });
      expect(Number(scored.score)).toBeGreaterThan(5);
      expect(scored.score).toMatch(/^-?\d+(\.\d+)?$/);
      expect(scored.symbols).toContain("GTUBE");

      await sendWithNodemailer(t.app.inboundPort!, {
        from: "alice@sender.test",
        to: email,
        subject: "lunch",
        text: "Shall we have lunch on Thursday?\n",
      });
      const ham = lastPayload().envelope.spamd;
      expect(ham.success).toBe(true);
      expect(Number(ham.score)).toBeLessThan(5);
      expect(ham.symbols).not.toContain("GTUBE");
    },
    60_000,
  );
});

describe("a spamd that does not answer", () => {
  let silent: Server;
  const held: Socket[] = [];
  beforeAll(async () => {
    silent = createServer((s) => void held.push(s));
    await new Promise<void>((r) => silent.listen(0, "127.0.0.1", r));
  });
  afterAll(() => {
    for (const s of held) s.destroy();
    silent.close();
  });

  test("silent: the mail goes on after inbound.spamd.timeout with success false", async () => {
    const port = (silent.address() as { port: number }).port;
    const { t, email } = await appliance(`127.0.0.1:${port}`, "300ms");
    const started = performance.now();
    expect(
      (await sendWithNodemailer(t.app.inboundPort!, { from: "alice@sender.test", to: email, subject: "s", text: "x" })).response,
    ).toStartWith("250");
    expect(performance.now() - started).toBeLessThan(5000);
    expect(lastPayload().envelope.spamd).toEqual({
      score: "0.0",
      symbols: [],
      success: false,
      description: "SpamAssassin: no answer within 300 ms",
    });
  }, 30_000);

  test("down (nothing listens): at once, success false, the mail delivered", async () => {
    const { t, email } = await appliance(`127.0.0.1:${await freePort()}`);
    expect(
      (await sendWithNodemailer(t.app.inboundPort!, { from: "alice@sender.test", to: email, subject: "s", text: "x" })).response,
    ).toStartWith("250");
    expect(lastPayload().envelope.spamd).toEqual({ score: "0.0", symbols: [], success: false, description: "SpamAssassin: ECONNREFUSED" });
  }, 30_000);
});

describe("without inbound.spamd", () => {
  test("the payload has no spamd field", async () => {
    const t = await startTestApp({ inbound: true });
    apps.push(t);
    const created = await t.json("POST", `/api/v0.1/${ACCOUNT_A.id}/addresses`, {
      auth: bearer(ACCOUNT_A.token),
      body: { target: target.url("/spam"), target_format: "json+n" },
    });
    await sendWithNodemailer(t.app.inboundPort!, { from: "alice@sender.test", to: created.body.email, subject: "s", text: "x" });
    expect("spamd" in lastPayload().envelope).toBe(false);
  }, 30_000);
});
