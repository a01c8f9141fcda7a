// The memory budget for mail in flight (limits.mail_in_flight, issue 15), in-process with a
// budget of 8 MB and messages of 3 MB (each counts a few times its size, so one fills it):
// while a message is in flight, the messages that started beside it wait, unread, and come
// in one after another (issue 31: first come, first served); new ones are deferred with
// 451 4.3.1 (at MAIL FROM when SIZE= says so, or at DATA) and E11 with 503 and
// Retry-After; what was accepted is posted; the budget returns to zero on every path, a
// client leaving mid-DATA included. The target holds each POST until the test lets it go,
// so "in flight" is a state the test controls, not a race.
import { afterAll, afterEach, beforeAll, describe, expect, test } from "bun:test";
import { bearer, startTestApp, type TestApp } from "../helpers/app.ts";
import { ACCOUNT_A } from "../helpers/fixtures.ts";
import { eventually } from "../helpers/sink.ts";
import { SmtpSession } from "../helpers/smtp-session.ts";

const A = `/api/v0.1/${ACCOUNT_A.id}`;
const auth = bearer(ACCOUNT_A.token);
const MB = 1024 * 1024;
const DEFERRED = "451 4.3.1 insufficient system resources, try again later";

/** A target that holds every POST until `open()` (and answers at once after it). */
function heldTarget() {
  let release: () => void = () => {};
  let gate = new Promise<void>((r) => (release = r));
  const posts: { bytes: number }[] = [];
  let waiting = 0;
  const server = Bun.serve({
    hostname: "127.0.0.1",
    port: 0,
    idleTimeout: 0,
    async fetch(req) {
      const bytes = (await req.arrayBuffer()).byteLength;
      waiting++;
      await gate;
      waiting--;
      posts.push({ bytes });
      return new Response("ok");
    },
  });
  return {
    url: `http://127.0.0.1:${server.port}/held`,
    posts,
    get waiting() {
      return waiting;
    },
    open: () => release(),
    close: () => (gate = new Promise<void>((r) => (release = r))),
    stop: () => server.stop(true),
  };
}

/** A message of about `bytes` (Base64 lines of random bytes), CRLF, ready for DATA (no dot-stuffing needed). */
function messageOf(bytes: number, to: string, subject: string): Buffer {
  const body = Buffer.from(crypto.getRandomValues(new Uint8Array(Math.floor((bytes * 57) / 78))))
    .toString("base64")
    .replace(/.{76}/g, "$&\r\n");
  return Buffer.from(
    `From: <a@sender.test>\r\nTo: <${to}>\r\nSubject: ${subject}\r\nContent-Type: application/octet-stream\r\nContent-Transfer-Encoding: base64\r\n\r\n${body}\r\n`,
    "latin1",
  );
}

let t: TestApp;
let target: ReturnType<typeof heldTarget>;
let rcpt: string;
const inFlight = () => t.app.budget.inFlightBytes;
async function metric(name: string): Promise<string[]> {
  const res = await fetch(`http://127.0.0.1:${t.app.httpPort}/metrics`, { headers: { authorization: "Bearer pr_metrics_token" } });
  return (await res.text()).split("\n").filter((l) => l.startsWith(name));
}

async function openSession(): Promise<SmtpSession> {
  const { session, greeting } = await SmtpSession.open(t.app.inboundPort!);
  expect(greeting).toStartWith("220 ");
  expect(await session.command("EHLO client.test")).toStartWith("250");
  return session;
}

/**
 * A whole transaction on a new connection; its replies (MAIL, RCPT, DATA, and the one to
 * the message when DATA got 354), the last one ending it.
 */
async function transaction(message: Buffer, declareSize: boolean, to = rcpt): Promise<string[]> {
  const s = await openSession();
  const replies = [await s.command(`MAIL FROM:<a@sender.test>${declareSize ? ` SIZE=${message.length}` : ""}`)];
  if (replies[0]!.startsWith("250")) replies.push(await s.command(`RCPT TO:<${to}>`));
  if (replies.at(-1)!.startsWith("250")) replies.push(await s.command("DATA"));
  if (replies.at(-1)!.startsWith("354")) {
    s.write(`${message.toString("latin1")}.\r\n`);
    replies.push(await s.reply());
  }
  await s.close();
  return replies;
}

beforeAll(async () => {
  target = heldTarget();
  const metricsHash = `sha256:${new Bun.CryptoHasher("sha256").update("pr_metrics_token").digest("hex")}`;
  t = await startTestApp({
    inbound: true,
    submission: true,
    accounts: [ACCOUNT_A],
    extra: '[limits]\nmail_in_flight = "8MB"',
    smtp: 'max_message_size = "4MB"',
    http: `metrics_token = "${metricsHash}"`,
  });
  const created = await t.json("POST", `${A}/addresses`, { auth, body: { target: target.url, target_format: "json+n" } });
  expect(created.status).toBe(201);
  rcpt = created.body.email;
  expect((await t.json("POST", `${A}/sending_domains`, { auth, body: { domain: "sender.test" } })).status).toBe(201);
});
afterAll(async () => {
  target.open();
  await t.stop();
  await target.stop();
});
afterEach(async () => {
  target.open();
  await eventually(() => inFlight() === 0, 10_000, "the budget back to zero");
  target.close();
});

describe("inbound SMTP", () => {
  test("4 messages of 3 MB at once: the oldest is posted while the others wait unread; new ones get 451 4.3.1; then the 3 come in one after another", async () => {
    const before = target.posts.length;
    // All four at 354 first (a SIZE= after the first message grew would be refused at MAIL FROM), then sent at once.
    const sessions: SmtpSession[] = [];
    for (const declare of [true, false, true, false]) {
      const s = await openSession();
      expect(await s.command(`MAIL FROM:<a@sender.test>${declare ? ` SIZE=${3 * MB}` : ""}`)).toStartWith("250");
      expect(await s.command(`RCPT TO:<${rcpt}>`)).toStartWith("250");
      expect(await s.command("DATA")).toStartWith("354");
      sessions.push(s);
    }
    const sends = sessions.map(async (s, i) => {
      s.write(`${messageOf(3 * MB, rcpt, `at once ${i}`).toString("latin1")}.\r\n`);
      const reply = await s.reply();
      await s.close();
      return [reply];
    });
    let answered = 0;
    for (const p of sends) void p.then(() => answered++);
    await eventually(() => target.waiting >= 1, 20_000, "one message at the target");
    // The other three wait with a first slice each: nothing else is read, nothing answered.
    await Bun.sleep(1500);
    expect([target.waiting, answered]).toEqual([1, 0]);
    expect(await metric("postroom_mail_waiting_for_memory ")).toEqual(["postroom_mail_waiting_for_memory 3"]);
    expect(inFlight()).toBeGreaterThan(8 * MB);
    expect(inFlight()).toBeLessThan(14 * MB);
    // While it is in flight: SIZE= that cannot fit is refused at MAIL FROM; without SIZE=, at DATA.
    expect(await transaction(messageOf(3 * MB, rcpt, "declared"), true)).toEqual([DEFERRED]);
    expect((await transaction(messageOf(3 * MB, rcpt, "undeclared"), false)).map((r) => r.slice(0, 3))).toEqual(["250", "250", "451"]);
    target.open();
    const all = await Promise.all(sends);
    expect(all.map((r) => r.at(-1)!.slice(0, 3))).toEqual(["250", "250", "250", "250"]);
    expect(target.posts.length - before).toBe(4);
    await eventually(() => inFlight() === 0, 5000, "the budget back to zero");
    expect(await metric("postroom_mail_in_flight_bytes ")).toEqual(["postroom_mail_in_flight_bytes 0"]);
    expect(await metric('postroom_mail_refused_memory_total{listener="inbound"}')).toEqual([
      'postroom_mail_refused_memory_total{listener="inbound"} 2',
    ]);
    expect(await metric('postroom_inbound_smtp_refusals_total{reason="memory_budget"}')).toEqual([
      'postroom_inbound_smtp_refusals_total{reason="memory_budget"} 2',
    ]);
  });

  test("a message that started beside an older one waits, unread, until the older one is in; both are accepted", async () => {
    const message = messageOf(3 * MB, rcpt, "first");
    const first = await openSession();
    expect(await first.command("MAIL FROM:<a@sender.test>")).toStartWith("250");
    expect(await first.command(`RCPT TO:<${rcpt}>`)).toStartWith("250");
    expect(await first.command("DATA")).toStartWith("354");
    // 1 MB of it: its reservation grows to a little over half the budget.
    first.write(message.subarray(0, MB).toString("latin1"));
    await eventually(() => inFlight() > 4 * MB, 5000, "the first message's bytes read");
    // It got its 354 (the budget had room for a first slice) and sent everything; it waits.
    let secondDone = false;
    const second = transaction(messageOf(3 * MB, rcpt, "second"), false).then((r) => ((secondDone = true), r));
    await Bun.sleep(1500);
    expect(secondDone).toBe(false);
    first.write(`${message.subarray(MB).toString("latin1")}.\r\n`);
    await eventually(() => target.waiting === 1, 5000, "the first message at the target");
    target.open();
    expect(await first.reply()).toStartWith("250");
    expect((await second).map((r) => r.slice(0, 3))).toEqual(["250", "250", "354", "250"]);
    await first.close();
  });

  test("a client that leaves in the middle of DATA gives its reservation back", async () => {
    const s = await openSession();
    expect(await s.command("MAIL FROM:<a@sender.test> SIZE=3000000")).toStartWith("250");
    expect(await s.command(`RCPT TO:<${rcpt}>`)).toStartWith("250");
    expect(await s.command("DATA")).toStartWith("354");
    s.write(messageOf(MB, rcpt, "cut").toString("latin1"));
    await eventually(() => inFlight() > 0, 5000, "the reservation");
    (s as unknown as { socket: { destroy(): void } }).socket.destroy();
    await eventually(() => inFlight() === 0, 5000, "the budget back to zero");
  });
});

describe("submission", () => {
  test("shares the budget: while it is full, 451 4.3.1 at MAIL FROM (SIZE=) and at DATA; then accepted", async () => {
    const held = transaction(messageOf(3 * MB, rcpt, "holds the budget"), true);
    await eventually(() => target.waiting === 1, 10_000, "a message in flight");
    const { session } = await SmtpSession.open(t.app.submissionPort!);
    expect(await session.command("EHLO client.test")).toStartWith("250");
    const plain = Buffer.from(`\u0000${ACCOUNT_A.outboundId}\u0000${ACCOUNT_A.smtpKey}`).toString("base64");
    expect(await session.command(`AUTH PLAIN ${plain}`)).toStartWith("235");
    expect(await session.command("MAIL FROM:<a@sender.test> SIZE=2000000")).toBe(DEFERRED);
    expect(await session.command("MAIL FROM:<a@sender.test>")).toStartWith("250");
    expect(await session.command("RCPT TO:<b@example.org>")).toStartWith("250");
    expect(await session.command("DATA")).toBe(DEFERRED);
    expect(await metric('postroom_mail_refused_memory_total{listener="submission"}')).toEqual([
      'postroom_mail_refused_memory_total{listener="submission"} 2',
    ]);
    target.open();
    expect((await held).at(-1)).toStartWith("250");
    expect(await session.command("RSET")).toStartWith("250");
    expect(await session.command("MAIL FROM:<a@sender.test> SIZE=2000000")).toStartWith("250");
    expect(await session.command("RCPT TO:<b@example.org>")).toStartWith("250");
    expect(await session.command("DATA")).toStartWith("354");
    await session.close();
  });
});

describe("E11", () => {
  test("while the budget is full: 503 with Retry-After, nothing queued; then 202", async () => {
    const held = transaction(messageOf(3 * MB, rcpt, "holds the budget"), true);
    await eventually(() => target.waiting === 1, 10_000, "a message in flight");
    const body = {
      from: "a@sender.test",
      to: "b@example.org",
      subject: "report",
      plain: "attached",
      test_mode: true,
      attachments: [{ file_name: "r.pdf", content_type: "application/pdf", content: Buffer.alloc(MB).toString("base64") }],
    };
    const refused = await t.json("POST", `/api/v0.1/${ACCOUNT_A.outboundId}/messages`, { auth: bearer(ACCOUNT_A.smtpKey), body });
    expect({ status: refused.status, body: refused.body, retryAfter: refused.headers.get("retry-after") }).toEqual({
      status: 503,
      body: { status: 503, error: "insufficient system resources, try again later" },
      retryAfter: "5",
    });
    expect(await metric('postroom_mail_refused_memory_total{listener="api"}')).toEqual([
      'postroom_mail_refused_memory_total{listener="api"} 1',
    ]);
    target.open();
    expect((await held).at(-1)).toStartWith("250");
    const sent = await t.json("POST", `/api/v0.1/${ACCOUNT_A.outboundId}/messages`, { auth: bearer(ACCOUNT_A.smtpKey), body });
    expect(sent.status).toBe(202);
    expect(inFlight()).toBe(0);
  });
});

describe("post again (a kept message)", () => {
  test("while the budget is full: 503 with Retry-After, nothing posted; then the message goes again", async () => {
    target.open();
    const kept = await t.json("POST", `${A}/addresses`, {
      auth,
      body: { target: target.url, target_format: "json+n", store_messages: true },
    });
    expect((await transaction(messageOf(3 * MB, kept.body.email, "kept large"), true, kept.body.email)).at(-1)).toStartWith("250");
    const listed = await t.json("GET", `${A}/incoming_statuses?address_id=${kept.body.id}`, { auth });
    expect([kept.status, listed.status, listed.body.length]).toEqual([201, 200, 1]);
    const status = listed.body[0];
    await eventually(() => inFlight() === 0, 10_000, "the budget back to zero");
    target.close();
    const held = transaction(messageOf(3 * MB, rcpt, "holds the budget"), true);
    await eventually(() => target.waiting === 1, 10_000, "a message in flight");
    const posts = target.posts.length;
    const again = `${A}/incoming_statuses/${status.id}/post_again?address_id=${kept.body.id}`;
    const refused = await t.json("POST", again, { auth });
    expect({ status: refused.status, body: refused.body, retryAfter: refused.headers.get("retry-after") }).toEqual({
      status: 503,
      body: { status: 503, error: "insufficient system resources, try again later" },
      retryAfter: "5",
    });
    target.open();
    expect((await held).at(-1)).toStartWith("250");
    expect(target.posts.length).toBe(posts + 1);
    const posted = await t.json("POST", again, { auth });
    expect([posted.status, posted.body.smtp_reply?.slice(0, 3)]).toEqual([200, "250"]);
    expect(target.posts.length).toBe(posts + 2);
  });
});
