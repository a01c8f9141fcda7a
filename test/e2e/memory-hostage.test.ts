// The memory budget cannot be held hostage (issue 31), against the built binary on fixed
// ports with the default limits.mail_in_flight (256 MB):
// - three strangers that declare SIZE=26000000, 26000000 and 14880000 and trickle 1 KB/s
//   hold only what they sent: another sender (another address) is accepted, with and
//   without SIZE=, and E11 answers 202 while they trickle (before: 451 at DATA or at MAIL
//   FROM, and 503);
// - one address with many connections, each sending 1.5 MB and then trickling, holds no
//   more than its share (limits.mail_in_flight_per_client, 25%): another address is still
//   accepted and the budget in use stays within that address's share.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { startBinaryAppliance, type BinaryAppliance } from "../helpers/binary-appliance.ts";
import { ACCOUNT_A } from "../helpers/fixtures.ts";
import { eventually } from "../helpers/sink.ts";
import { SmtpSession } from "../helpers/smtp-session.ts";

const MB = 1024 * 1024;
const BUDGET = 256 * MB;
const METRICS_TOKEN = "pr_metrics_token";

let app: BinaryAppliance;

async function inFlight(): Promise<number> {
  const res = await fetch(`${app.http}/metrics`, { headers: { authorization: `Bearer ${METRICS_TOKEN}` } });
  const line = (await res.text()).split("\n").find((l) => l.startsWith("postroom_mail_in_flight_bytes "));
  return Number(line?.split(" ")[1]);
}

/** A message of about `bytes` (Base64 lines), CRLF, nothing to dot-stuff. */
function messageOf(bytes: number, subject: string): Buffer {
  const body = Buffer.from(crypto.getRandomValues(new Uint8Array(Math.floor((bytes * 57) / 78))))
    .toString("base64")
    .replace(/.{76}/g, "$&\r\n");
  return Buffer.from(
    `From: <a@sender.test>\r\nTo: <${app.email}>\r\nSubject: ${subject}\r\nContent-Type: application/octet-stream\r\nContent-Transfer-Encoding: base64\r\n\r\n${body}\r\n`,
    "latin1",
  );
}

/** A session at 354 (MAIL FROM with `size`, RCPT, DATA) from `localAddress`, or the reply that stopped it. */
async function atData(localAddress: string, size: number | null): Promise<{ session: SmtpSession; replies: string[] }> {
  const { session, greeting } = await SmtpSession.open(app.inboundPort, { localAddress });
  expect(greeting).toStartWith("220 ");
  const replies = [await session.command("EHLO client.test")];
  replies.push(await session.command(`MAIL FROM:<a@sender.test>${size === null ? "" : ` SIZE=${size}`}`));
  if (replies.at(-1)!.startsWith("250")) replies.push(await session.command(`RCPT TO:<${app.email}>`));
  if (replies.at(-1)!.startsWith("250")) replies.push(await session.command("DATA"));
  return { session, replies: replies.slice(1) };
}

/** A whole transaction from `localAddress`: the first three codes and the final reply. */
async function send(localAddress: string, message: Buffer, declare: boolean): Promise<string[]> {
  const { session, replies } = await atData(localAddress, declare ? message.length : null);
  if (replies.at(-1)!.startsWith("354")) {
    session.write(`${message.toString("latin1")}.\r\n`);
    replies.push(await session.reply());
  }
  await session.close();
  return replies;
}

/** Writes 1 KB of the message every second on each session until stopped. */
function trickle(sessions: SmtpSession[]) {
  const line = `${"x".repeat(1022)}\r\n`;
  const timer = setInterval(() => {
    for (const s of sessions) s.write(line);
  }, 1000);
  return () => {
    clearInterval(timer);
    for (const s of sessions) (s as unknown as { socket: { destroy(): void } }).socket.destroy();
  };
}

beforeAll(async () => {
  const metricsHash = `sha256:${new Bun.CryptoHasher("sha256").update(METRICS_TOKEN).digest("hex")}`;
  app = await startBinaryAppliance({ accounts: [ACCOUNT_A], http: `metrics_token = "${metricsHash}"` });
  const created = await fetch(`${app.http}/api/v0.1/${ACCOUNT_A.id}/sending_domains`, {
    method: "POST",
    headers: { authorization: `Bearer ${ACCOUNT_A.token}`, "content-type": "application/json" },
    body: JSON.stringify({ domain: "sender.test" }),
  });
  expect(created.status).toBe(201);
}, 120_000);
afterAll(async () => {
  await app?.stop();
});

describe("the built binary, default budget", () => {
  test("three strangers declaring 26, 26 and 14.9 MB and trickling 1 KB/s hold only what they sent: another address gets 250, E11 202", async () => {
    const trio = await Promise.all([atData("127.0.0.3", 26_000_000), atData("127.0.0.4", 26_000_000), atData("127.0.0.5", 14_880_000)]);
    for (const t of trio) expect(t.replies.map((r) => r.slice(0, 3))).toEqual(["250", "250", "354"]);
    const stop = trickle(trio.map((t) => t.session));
    try {
      await Bun.sleep(3000);
      // What they sent (a few KB each) is what they hold, not what they declared.
      expect(await inFlight()).toBeLessThan(8 * MB);
      const withoutSize = await send("127.0.0.2", messageOf(2 * MB, "beside the trio"), false);
      expect(withoutSize.map((r) => r.slice(0, 3))).toEqual(["250", "250", "354", "250"]);
      const withSize = await send("127.0.0.2", messageOf(2 * MB, "beside the trio, SIZE="), true);
      expect(withSize.map((r) => r.slice(0, 3))).toEqual(["250", "250", "354", "250"]);
      const e11 = await fetch(`${app.http}/api/v0.1/${ACCOUNT_A.outboundId}/messages`, {
        method: "POST",
        headers: { authorization: `Bearer ${ACCOUNT_A.smtpKey}`, "content-type": "application/json" },
        body: JSON.stringify({
          from: "a@sender.test",
          to: "b@example.org",
          subject: "report",
          plain: "attached",
          test_mode: true,
          attachments: [{ file_name: "r.pdf", content_type: "application/pdf", content: Buffer.alloc(MB).toString("base64") }],
        }),
      });
      expect(e11.status).toBe(202);
    } finally {
      stop();
    }
    await eventually(async () => (await inFlight()) === 0, 10_000, "the budget back to zero");
  }, 60_000);

  test("one address with 45 connections sending 1.5 MB each holds at most its share; another address gets 250", async () => {
    const message = messageOf(1.5 * MB, "many");
    const sessions = await Promise.all(Array.from({ length: 45 }, () => atData("127.0.0.6", null)));
    const open = sessions.filter((s) => s.replies.at(-1)!.startsWith("354")).map((s) => s.session);
    // All but the last line of the message, then 1 KB a second.
    const body = message.subarray(0, message.length - 100).toString("latin1");
    for (const s of open) s.write(body);
    const stop = trickle(open);
    try {
      await Bun.sleep(4000);
      const held = await inFlight();
      expect(held).toBeLessThanOrEqual(BUDGET / 4 + 8 * MB);
      const other = await send("127.0.0.2", messageOf(2 * MB, "beside the crowd"), false);
      expect(other.map((r) => r.slice(0, 3))).toEqual(["250", "250", "354", "250"]);
    } finally {
      stop();
      for (const s of sessions) (s.session as unknown as { socket: { destroy(): void } }).socket.destroy();
    }
    await eventually(async () => (await inFlight()) === 0, 10_000, "the budget back to zero");
  }, 60_000);
});
