// Abuse of the SMTP listeners against the built binary, as an attacker would try it (issue
// 14): a flood of idle connections from one address, a DATA that drips a few bytes a
// second, and AUTH in clear on a submission port without a certificate. After each,
// another client (another source address, 127.0.0.2) gets an ordinary message accepted
// within a second. The limits are short here so each test stays short.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { ordinaryMessageAccepted as accepted, startBinaryAppliance, type BinaryAppliance } from "../helpers/binary-appliance.ts";
import { ACCOUNT_A } from "../helpers/fixtures.ts";
import { eventually } from "../helpers/sink.ts";
import { SmtpSession } from "../helpers/smtp-session.ts";
import { runSwaks } from "../helpers/smtp.ts";
import { requireTools } from "../helpers/tools.ts";

const PER_IP = 20;
const LIMITS = `max_connections_per_ip = ${PER_IP}\nmin_data_rate = 200\ndata_rate_window = "2s"`;
const TOO_MANY = "421 4.7.0 Too many connections from your address; try again later";
const ENCRYPTION_REQUIRED =
  "538 5.7.11 Encryption required for requested authentication mechanism: this listener has no certificate (the tls section sets one); use port 465 or STARTTLS once it has";

let appliance: BinaryAppliance;

beforeAll(async () => {
  appliance = await startBinaryAppliance({ submission: true, allowInsecureAuth: false, accounts: [ACCOUNT_A], smtp: LIMITS });
}, 180_000);

afterAll(() => appliance?.stop());

const ordinaryMessageAccepted = (subject: string) => accepted(appliance, subject);

/** The next reply, or "(no reply)" when none comes within `ms`. */
function replyWithin(session: SmtpSession, ms: number): Promise<string> {
  return Promise.race([session.reply(), Bun.sleep(ms).then(() => "(no reply)")]);
}

describe("SMTP abuse against the binary", () => {
  test(`60 idle connections from one address: ${PER_IP} are greeted, the rest get 421 4.7.0 at once; another client's message is accepted within a second`, async () => {
    const opened = await Promise.all(Array.from({ length: 60 }, () => SmtpSession.open(appliance.inboundPort)));
    try {
      const greetings = opened.map((o) => o.greeting);
      expect(greetings.filter((g) => g.startsWith("220 ")).length).toBe(PER_IP);
      expect(greetings.filter((g) => g === TOO_MANY).length).toBe(60 - PER_IP);
      // The flood still holds its connections: another address is not held up by them.
      await ordinaryMessageAccepted("after the idle flood");
      const refused = await appliance.server.waitFor(
        (l) => l.msg === "smtp session closed by a limit" && l.limit === "max_connections_per_ip",
      );
      expect(refused).toMatchObject({ level: "info", ip: "127.0.0.1" });
    } finally {
      for (const o of opened) await o.session.close();
    }
  }, 30_000);

  test("a DATA dripping 3 bytes every half second is cut with 421 4.4.2, its message not accepted; another client's message is accepted within a second", async () => {
    // Greeted once the server has seen the flood's connections close.
    const { session } = await eventually(
      async () => {
        const opened = await SmtpSession.open(appliance.inboundPort);
        if (opened.greeting.startsWith("220 ")) return opened;
        await opened.session.close();
        return null;
      },
      5000,
      "a slot after the flood",
    );
    await session.command("EHLO dripper.example.org");
    expect(await session.command("MAIL FROM:<drip@sender.test>")).toStartWith("250");
    expect(await session.command(`RCPT TO:<${appliance.email}>`)).toStartWith("250");
    expect(await session.command("DATA")).toStartWith("354");
    const body = "Subject: the drip\r\n\r\n" + "x".repeat(1000);
    let sent = 0;
    const drip = setInterval(() => session.write(body.slice(sent, (sent += 3))), 500);
    const started = performance.now();
    try {
      expect(await replyWithin(session, 8000)).toBe("421 4.4.2 Data arriving too slowly (under 200 bytes per second); closing connection");
      expect(performance.now() - started).toBeLessThan(4500);
    } finally {
      clearInterval(drip);
      await session.close();
    }
    await ordinaryMessageAccepted("after the drip");
    expect(appliance.target.at("/in").some((m) => m.json.headers.subject === "the drip")).toBe(false);
    expect(appliance.server.lines.filter((l) => l.level === "error")).toEqual([]);
  }, 30_000);

  test("AUTH PLAIN and LOGIN in clear on submission without a certificate: 538 5.7.11, and the start log said why; another client's message is accepted within a second", async () => {
    const warned = appliance.server.lines.filter((l) => l.level === "warn" && String(l.msg).startsWith("submission smtp refuses AUTH"));
    expect(warned).toHaveLength(1);
    expect(warned[0]).toMatchObject({ listen: `127.0.0.1:${appliance.submissionPort}` });
    expect(warned[0]!.fix).toContain("smtp.allow_insecure_auth = true");

    const { session } = await SmtpSession.open(appliance.submissionPort);
    try {
      await session.command("EHLO attacker.example.org");
      const plain = Buffer.from(`\0${ACCOUNT_A.outboundId}\0${ACCOUNT_A.smtpKey}`).toString("base64");
      expect(await session.command(`AUTH PLAIN ${plain}`)).toBe(ENCRYPTION_REQUIRED);
      expect(await session.command("AUTH LOGIN")).toBe(ENCRYPTION_REQUIRED);
      expect(await session.command("MAIL FROM:<ann@sender.test>")).toStartWith("530");
    } finally {
      await session.close();
    }
    await ordinaryMessageAccepted("after AUTH in clear");
  }, 30_000);

  requireTools("swaks")(
    "swaks AUTH LOGIN on submission without a certificate: EHLO lists no AUTH, so swaks never sends the password; never 235",
    async () => {
      const r = await runSwaks([
        "--server",
        `127.0.0.1:${appliance.submissionPort}`,
        "--auth",
        "LOGIN",
        "--auth-user",
        ACCOUNT_A.outboundId,
        "--auth-password",
        ACCOUNT_A.smtpKey,
        "--quit-after",
        "AUTH",
        "--timeout",
        "10",
      ]);
      expect(r.transcript).toMatch(/<-\s+250 /);
      expect(r.transcript).not.toMatch(/^<-\s+250[ -]AUTH/m);
      expect(r.transcript).not.toMatch(/->\s+AUTH/);
      expect(r.transcript).not.toContain(Buffer.from(ACCOUNT_A.smtpKey).toString("base64"));
      expect(r.transcript).not.toMatch(/^<\S* +235 /m);
      await ordinaryMessageAccepted("after swaks AUTH in clear");
    },
    30_000,
  );
});
