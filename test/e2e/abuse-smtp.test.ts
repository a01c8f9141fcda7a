// Abuse of the SMTP listeners against the built binary, as an attacker would try it (issue
// 14): a flood of idle connections from one address, a DATA that drips a few bytes a
// second, and AUTH in clear on a submission port without a certificate. After each,
// another client (another source address, 127.0.0.2) gets an ordinary message accepted
// within a second. The limits are short here so each test stays short.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { join } from "node:path";
import nodemailer from "nodemailer";
import { builtBinary } from "../helpers/binary.ts";
import { ACCOUNT_A, testConfigToml } from "../helpers/fixtures.ts";
import { freePort } from "../helpers/pebble.ts";
import { ServeProcess } from "../helpers/process.ts";
import { SmtpSession } from "../helpers/smtp-session.ts";
import { runSwaks, swaksAvailable } from "../helpers/smtp.ts";
import { TestTarget } from "../helpers/target.ts";
import { tempDir } from "../helpers/tmp.ts";

const PER_IP = 20;
const LIMITS = `max_connections_per_ip = ${PER_IP}\nmin_data_rate = 200\ndata_rate_window = "2s"`;
const TOO_MANY = "421 4.7.0 Too many connections from your address; try again later";
const ENCRYPTION_REQUIRED = "538 5.7.11 Encryption required for requested authentication mechanism";

const dir = tempDir();
let server: ServeProcess;
let target: TestTarget;
let inboundPort = 0;
let submissionPort = 0;
let email = "";

beforeAll(async () => {
  const [httpPort, smtpPort, subPort] = [await freePort(), await freePort(), await freePort()];
  inboundPort = smtpPort;
  submissionPort = subPort;
  target = TestTarget.start();
  const configPath = join(dir.path, "postroom.toml");
  await Bun.write(
    configPath,
    testConfigToml({ dataDir: join(dir.path, "data"), inbound: true, submission: true, allowInsecureAuth: false, accounts: [ACCOUNT_A], smtp: LIMITS })
      .replace('listen = "127.0.0.1:0"', `listen = "127.0.0.1:${httpPort}"`)
      .replace('inbound_listen = "127.0.0.1:0"', `inbound_listen = "127.0.0.1:${smtpPort}"`)
      .replace('submission_listen = "127.0.0.1:0"', `submission_listen = "127.0.0.1:${subPort}"`)
      .replace('level = "warn"', 'level = "info"'),
  );
  server = ServeProcess.run([builtBinary(), "serve", "--config", configPath], dir.path);
  const http = `http://127.0.0.1:${await server.httpPort()}`;
  await server.waitFor((l) => l.msg === "postroom started");
  const created = await fetch(`${http}/api/v0.1/${ACCOUNT_A.id}/addresses`, {
    method: "POST",
    headers: { authorization: `Bearer ${ACCOUNT_A.token}`, "content-type": "application/json" },
    body: JSON.stringify({ target: target.url("/in"), target_format: "json+n" }),
  });
  email = ((await created.json()) as { email: string }).email;
}, 180_000);

afterAll(async () => {
  server?.signal("SIGTERM");
  await server?.exited();
  await target?.stop();
  dir.remove();
});

/** Another client's (127.0.0.2) ordinary message: the SMTP reply comes within a second and the target gets it. */
async function ordinaryMessageAccepted(subject: string): Promise<void> {
  const transport = nodemailer.createTransport({ host: "127.0.0.1", port: inboundPort, localAddress: "127.0.0.2", secure: false, ignoreTLS: true, name: "client.example.org" });
  try {
    const started = performance.now();
    const info = await transport.sendMail({ from: "bob@sender.test", to: email, subject, text: "an ordinary message" });
    expect(info.response).toStartWith("250");
    expect(performance.now() - started).toBeLessThan(1000);
    expect(target.at("/in").some((m) => m.json.headers.subject === subject)).toBe(true);
  } finally {
    transport.close();
  }
}

/** The next reply, or "(no reply)" when none comes within `ms`. */
function replyWithin(session: SmtpSession, ms: number): Promise<string> {
  return Promise.race([session.reply(), Bun.sleep(ms).then(() => "(no reply)")]);
}

describe("SMTP abuse against the binary", () => {
  test(`60 idle connections from one address: ${PER_IP} are greeted, the rest get 421 4.7.0 at once; another client's message is accepted within a second`, async () => {
    const opened = await Promise.all(Array.from({ length: 60 }, () => SmtpSession.open(inboundPort)));
    try {
      const greetings = opened.map((o) => o.greeting);
      expect(greetings.filter((g) => g.startsWith("220 ")).length).toBe(PER_IP);
      expect(greetings.filter((g) => g === TOO_MANY).length).toBe(60 - PER_IP);
      // The flood still holds its connections: another address is not held up by them.
      await ordinaryMessageAccepted("after the idle flood");
      const refused = await server.waitFor((l) => l.msg === "smtp session closed by a limit" && l.limit === "max_connections_per_ip");
      expect(refused).toMatchObject({ level: "info", ip: "127.0.0.1" });
    } finally {
      for (const o of opened) await o.session.close();
    }
  }, 30_000);

  test("a DATA dripping 3 bytes every half second is cut with 421 4.4.2, its message not accepted; another client's message is accepted within a second", async () => {
    await Bun.sleep(200); // the flood's connections are gone
    const { session, greeting } = await SmtpSession.open(inboundPort);
    expect(greeting).toStartWith("220 ");
    await session.command("EHLO dripper.example.org");
    expect(await session.command("MAIL FROM:<drip@sender.test>")).toStartWith("250");
    expect(await session.command(`RCPT TO:<${email}>`)).toStartWith("250");
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
    expect(target.at("/in").some((m) => m.json.headers.subject === "the drip")).toBe(false);
    expect(server.lines.filter((l) => l.level === "error")).toEqual([]);
  }, 30_000);

  test("AUTH PLAIN and LOGIN in clear on submission without a certificate: 538 5.7.11, and the start log said why; another client's message is accepted within a second", async () => {
    const warned = server.lines.filter((l) => l.level === "warn" && String(l.msg).startsWith("submission smtp refuses AUTH"));
    expect(warned).toHaveLength(1);
    expect(warned[0]).toMatchObject({ listen: `127.0.0.1:${submissionPort}` });
    expect(warned[0]!.fix).toContain("smtp.allow_insecure_auth = true");

    const { session } = await SmtpSession.open(submissionPort);
    try {
      await session.command("EHLO attacker.example.org");
      const plain = Buffer.from(`\0${ACCOUNT_A.outboundId}\0${ACCOUNT_A.smtpKey}`).toString("base64");
      expect(await session.command(`AUTH PLAIN ${plain}`)).toBe(ENCRYPTION_REQUIRED);
      expect(await session.command("AUTH LOGIN")).toBe(ENCRYPTION_REQUIRED);
      expect(await session.command("MAIL FROM:<ann@sender.test>")).toStartWith("530");
    } finally {
      await session.close();
    }
    if (swaksAvailable()) {
      const r = await runSwaks(["--server", `127.0.0.1:${submissionPort}`, "--auth", "LOGIN", "--auth-user", ACCOUNT_A.outboundId, "--auth-password", ACCOUNT_A.smtpKey, "--quit-after", "AUTH", "--timeout", "10"]);
      expect(r.transcript).toContain(ENCRYPTION_REQUIRED);
      expect(r.transcript).not.toMatch(/^<\S* +235 /m);
    }
    await ordinaryMessageAccepted("after AUTH in clear");
  }, 30_000);
});
