// The limits every SMTP session is held to (issue 14): connections per client, junk
// commands, the session's length, the data rate in DATA, the time to AUTH on submission,
// AUTH only over TLS, and a SIGHUP reload reaching the next session. In-process, with
// short limits; abuse-smtp.test.ts runs the same attacks against the built binary.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { connect } from "node:net";
import { connect as tlsConnect } from "node:tls";
import { hashSecret } from "../../src/auth/secrets.ts";
import { parseConfigText } from "../../src/config/load.ts";
import { createLogger } from "../../src/lib/logger.ts";
import { makeSelfSignedCert } from "../helpers/certs.ts";
import { bearer, startTestApp, type TestApp, type TestAppOptions } from "../helpers/app.ts";
import { ACCOUNT_A, testConfigToml } from "../helpers/fixtures.ts";
import { eventually } from "../helpers/sink.ts";
import { SmtpSession } from "../helpers/smtp-session.ts";
import { TestTarget } from "../helpers/target.ts";
import { tempDir } from "../helpers/tmp.ts";
import { scrapeMetrics } from "../helpers/metrics.ts";

const A = `/api/v0.1/${ACCOUNT_A.id}`;
const auth = bearer(ACCOUNT_A.token);
const METRICS_TOKEN = "pr_metrics_token_for_tests";
const INBOUND_LIMITS =
  'max_connections_per_ip = 3\nmax_junk_commands = 5\nmax_session_time = "3s"\nmin_data_rate = 100\ndata_rate_window = "1s"\nmax_recipients = 5';

let target: TestTarget;
let t: TestApp;
const logLines: string[] = [];
const logged = () => logLines.map((l) => JSON.parse(l) as Record<string, any>);

async function addressFor(app: TestApp, path: string) {
  const res = await app.json("POST", `${A}/addresses`, { auth, body: { target: target.url(path), target_format: "json+n" } });
  return res.body as { id: string; email: string };
}

async function open(port: number, localAddress?: string) {
  const { session, greeting } = await SmtpSession.open(port, { localAddress });
  return { session, greeting };
}

const message = (subject: string) => `From: alice@sender.test\r\nTo: someone@example.org\r\nSubject: ${subject}\r\n\r\nhello\r\n`;

/** The reply the server sends on its own (a deadline), and how long it took to come. */
async function unpromptedReply(session: SmtpSession): Promise<{ reply: string; ms: number }> {
  const started = performance.now();
  const reply = await session.reply();
  return { reply, ms: performance.now() - started };
}

beforeAll(async () => {
  target = TestTarget.start();
  t = await startTestApp({
    inbound: true,
    accounts: [ACCOUNT_A],
    smtp: INBOUND_LIMITS,
    http: `metrics_token = "${hashSecret(METRICS_TOKEN)}"`,
    logger: createLogger({ level: "info", sink: (line) => logLines.push(line) }),
  });
});
afterAll(async () => {
  await t.stop();
  await target.stop();
});

describe("inbound", () => {
  test("max_connections_per_ip: past it 421 4.7.0 at once, another client is greeted, and a closed one frees its slot", async () => {
    const held = [];
    for (let i = 0; i < 3; i++) {
      const { session, greeting } = await open(t.app.inboundPort!);
      expect(greeting).toStartWith("220 ");
      held.push(session);
    }
    const refused = await open(t.app.inboundPort!);
    expect(refused.greeting).toBe("421 4.7.0 Too many connections from your address; try again later");
    await eventually(() => refused.session.closed, 5000, "the refused connection closed");
    const other = await open(t.app.inboundPort!, "127.0.0.2");
    expect(other.greeting).toStartWith("220 ");
    await other.session.close();
    await held.pop()!.close();
    // The server frees the slot once it has seen the close: a new connection is greeted then.
    const again = await eventually(
      async () => {
        const next = await open(t.app.inboundPort!);
        if (next.greeting.startsWith("220 ")) return next;
        await next.session.close();
        return null;
      },
      5000,
      "a slot freed by the closed connection",
    );
    for (const s of [...held, again.session]) await s.close();
    expect(
      logged().some((l) => l.msg === "smtp session closed by a limit" && l.limit === "max_connections_per_ip" && l.ip === "127.0.0.1"),
    ).toBe(true);
  });

  test("max_junk_commands: the sixth NOOP/RSET/VRFY gets 421 4.7.0; a message in between starts the count again", async () => {
    const addr = await addressFor(t, "/junk");
    const { session } = await open(t.app.inboundPort!);
    expect(await session.command("EHLO client.example.org")).toStartWith("250");
    for (const cmd of ["NOOP", "RSET", "VRFY x"]) expect(await session.command(cmd)).toMatch(/^2/);
    expect(await session.command("MAIL FROM:<alice@sender.test>")).toStartWith("250");
    expect(await session.command(`RCPT TO:<${addr.email}>`)).toStartWith("250");
    expect(await session.data(message("junk"))).toBe("250 2.0.0 Accepted");
    for (let i = 0; i < 5; i++) expect(await session.command("NOOP")).toStartWith("250");
    expect(await session.command("NOOP")).toBe("421 4.7.0 Too many commands without mail; closing connection");
    await eventually(() => session.closed, 5000, "the connection closed");
    // Counted on /metrics by the limit's name.
    expect(
      (await scrapeMetrics(t.app.httpPort!, METRICS_TOKEN)).value("postroom_inbound_smtp_refusals_total", { reason: "max_junk_commands" }),
    ).toBe(1);
  });

  test("min_data_rate: DATA dripping a few bytes a second is cut with 421 4.4.2 and the message is not accepted", async () => {
    const addr = await addressFor(t, "/drip");
    const linesBefore = logLines.length;
    const { session } = await open(t.app.inboundPort!);
    await session.command("EHLO client.example.org");
    await session.command("MAIL FROM:<alice@sender.test>");
    await session.command(`RCPT TO:<${addr.email}>`);
    expect(await session.command("DATA")).toStartWith("354");
    const drip = setInterval(() => session.write("Subject: x\r\n".slice(0, 5)), 200);
    try {
      const { reply, ms } = await unpromptedReply(session);
      expect(reply).toBe("421 4.4.2 Data arriving too slowly (under 100 bytes per second); closing connection");
      expect(ms).toBeLessThan(2500);
    } finally {
      clearInterval(drip);
    }
    // The end of the message's processing: the log says it was not received in full. Only
    // then can the target be known not to have been called.
    const lines = () => logged().slice(linesBefore);
    await eventually(() => lines().some((l) => l.msg === "inbound message not received in full"), 5000, "the end of the cut message");
    await eventually(() => session.closed, 5000, "the connection closed");
    expect(target.at("/drip")).toEqual([]);
    expect(lines().filter((l) => l.msg === "smtp session closed by a limit" && l.limit === "min_data_rate")).toHaveLength(1);
    expect(lines().filter((l) => l.level === "error")).toEqual([]);
  });

  test("max_session_time: a client trickling a command byte by byte is cut with 421 4.4.2", async () => {
    const { session } = await open(t.app.inboundPort!);
    await session.command("EHLO client.example.org");
    const trickle = setInterval(() => session.write("N"), 300);
    try {
      const { reply, ms } = await unpromptedReply(session);
      expect(reply).toBe("421 4.4.2 Session time limit of 3s reached; closing connection");
      expect(ms).toBeGreaterThan(2000);
      expect(ms).toBeLessThan(4000);
    } finally {
      clearInterval(trickle);
    }
  });

  test("a reload with a lower max_recipients (and max_junk_commands) holds the next session to them", async () => {
    const addr = await addressFor(t, "/reload");
    const rcpts = [1, 2, 3].map((i) => `${addr.id}+r${i}@in.postroom.test`);
    const before = await open(t.app.inboundPort!);
    await before.session.command("EHLO client.example.org");
    await before.session.command("MAIL FROM:<alice@sender.test>");
    for (const r of rcpts) expect(await before.session.command(`RCPT TO:<${r}>`)).toStartWith("250");
    await before.session.close();

    const next = parseConfigText(
      testConfigToml({
        dataDir: t.dataDir,
        inbound: true,
        accounts: [ACCOUNT_A],
        dnsServer: t.app.config.dns.servers[0],
        smtp: INBOUND_LIMITS.replace("max_recipients = 5", "max_recipients = 2").replace("max_junk_commands = 5", "max_junk_commands = 1"),
      }),
    );
    if (!next.ok) throw new Error(next.problems.join("\n"));
    const original = t.app.config;
    t.app.reload(next.config);
    try {
      const after = await open(t.app.inboundPort!);
      await after.session.command("EHLO client.example.org");
      await after.session.command("MAIL FROM:<alice@sender.test>");
      const replies = [];
      for (const r of rcpts) replies.push(await after.session.command(`RCPT TO:<${r}>`));
      expect(replies.map((r) => r.slice(0, 3))).toEqual(["250", "250", "452"]);
      expect(await after.session.command("RSET")).toStartWith("421 4.7.0");
    } finally {
      t.app.reload(original);
    }
  });
});

describe("submission without a certificate", () => {
  let s: TestApp;
  const lines: string[] = [];
  const PLAIN = Buffer.from(`\0${ACCOUNT_A.outboundId}\0${ACCOUNT_A.smtpKey}`).toString("base64");
  const opts = (allowInsecureAuth: boolean): TestAppOptions => ({
    submission: true,
    allowInsecureAuth,
    accounts: [ACCOUNT_A],
    smtp: 'auth_timeout = "1s"',
  });

  beforeAll(async () => {
    s = await startTestApp({ ...opts(false), logger: createLogger({ level: "info", sink: (line) => lines.push(line) }) });
  });
  afterAll(async () => {
    await s.stop();
  });

  test("the log says at start why AUTH is refused and the two ways out", () => {
    const warned = lines.map((l) => JSON.parse(l)).filter((l) => l.level === "warn" && l.msg.startsWith("submission smtp refuses AUTH"));
    expect(warned).toHaveLength(1);
    expect(warned[0].listen).toBe(`127.0.0.1:${s.app.submissionPort}`);
    expect(warned[0].fix).toContain("[tls]");
    expect(warned[0].fix).toContain("smtp.allow_insecure_auth = true");
  });

  test("AUTH PLAIN and AUTH LOGIN get 538 5.7.11 before any credential is read; MAIL still needs AUTH", async () => {
    const { session } = await open(s.app.submissionPort!);
    try {
      await session.command("EHLO client.example.org");
      expect(await session.command(`AUTH PLAIN ${PLAIN}`)).toBe(
        "538 5.7.11 Encryption required for requested authentication mechanism: this listener has no certificate (the tls section sets one); use port 465 or STARTTLS once it has",
      );
      expect(await session.command("AUTH LOGIN")).toBe(
        "538 5.7.11 Encryption required for requested authentication mechanism: this listener has no certificate (the tls section sets one); use port 465 or STARTTLS once it has",
      );
      expect(await session.command("MAIL FROM:<ann@sender.test>")).toStartWith("530");
    } finally {
      await session.close();
    }
  });

  test("auth_timeout: a session that has not authenticated within it gets 421 4.7.0", async () => {
    const { session } = await open(s.app.submissionPort!);
    await session.command("EHLO client.example.org");
    const { reply, ms } = await unpromptedReply(session);
    expect(reply).toBe("421 4.7.0 Authentication required within 1s; closing connection");
    expect(ms).toBeLessThan(1500);
  });

  test("allow_insecure_auth (by reload) lets AUTH through in clear, and an authenticated session outlives auth_timeout", async () => {
    const next = parseConfigText(testConfigToml({ dataDir: s.dataDir, ...opts(true), dnsServer: s.app.config.dns.servers[0] }));
    if (!next.ok) throw new Error(next.problems.join("\n"));
    s.app.reload(next.config);
    const { session } = await open(s.app.submissionPort!);
    try {
      await session.command("EHLO client.example.org");
      expect(await session.command(`AUTH PLAIN ${PLAIN}`)).toBe("235 2.7.0 Authentication successful");
      await Bun.sleep(1300);
      expect(await session.command("NOOP")).toStartWith("250");
    } finally {
      await session.close();
    }
  });
});

describe("submission with implicit TLS", () => {
  let s: TestApp;
  const certs = tempDir();

  beforeAll(async () => {
    const { certFile, keyFile } = makeSelfSignedCert(certs.path, "mx.postroom.test");
    s = await startTestApp({
      submission: true,
      accounts: [ACCOUNT_A],
      smtp: 'submission_tls_listen = "127.0.0.1:0"\nmax_connections_per_ip = 3',
      tls: `mode = "files"\ncert_file = "${certFile}"\nkey_file = "${keyFile}"`,
    });
  });
  afterAll(async () => {
    await s.stop();
    certs.remove();
  });

  /** A TCP connection that never starts its TLS handshake; resolves once it is open, tells when it is closed. */
  async function silentSocket(port: number) {
    const socket = connect({ port, host: "127.0.0.1" });
    await new Promise<void>((resolve, reject) => socket.once("connect", resolve).once("error", reject));
    let isClosed = false;
    const closed = new Promise<void>((resolve) => socket.once("close", () => ((isClosed = true), resolve())));
    socket.on("error", () => {});
    return { socket, closed, isClosed: () => isClosed };
  }

  test("sockets waiting for their handshake count against max_connections_per_ip: the one past it is dropped; another client gets its greeting", async () => {
    const port = s.app.submissionTlsPort!;
    const waiting = [await silentSocket(port), await silentSocket(port), await silentSocket(port)];
    const extra = await silentSocket(port);
    try {
      await extra.closed;
      const greeting = await new Promise<string>((resolve, reject) => {
        // Another client: a TCP socket from 127.0.0.2, then TLS over it.
        const tls = tlsConnect({
          socket: connect({ port, host: "127.0.0.1", localAddress: "127.0.0.2" }),
          rejectUnauthorized: false,
          servername: "mx.postroom.test",
        });
        tls.once("data", (d: Buffer) => (resolve(d.toString()), tls.end()));
        tls.once("error", reject);
      });
      expect(greeting).toStartWith("220 mx.postroom.test");
      // The server dropped the extra socket and has since served another connection: had it
      // dropped the waiting ones too, their close would have come before that greeting.
      expect(waiting.map((w) => w.isClosed())).toEqual([false, false, false]);
    } finally {
      for (const w of [...waiting, extra]) w.socket.destroy();
    }
  });
});
