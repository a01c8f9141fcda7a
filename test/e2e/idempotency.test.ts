// Idempotent sends (docs/sending.md): E11's Idempotency-Key (alias X-Idempotency-Key) and
// the Message-ID of a submitted message, per outbound account, remembered 24 hours.
import { Database } from "bun:sqlite";
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { join } from "node:path";
import nodemailer from "nodemailer";
import { ManualClock } from "../../src/lib/clock.ts";
import { bearer, startTestApp, type TestApp } from "../helpers/app.ts";
import { ACCOUNT_A, ACCOUNT_B } from "../helpers/fixtures.ts";
import { eventually } from "../helpers/sink.ts";
import { tempDir } from "../helpers/tmp.ts";

const HOUR = 3_600_000;
const clock = new ManualClock(Date.parse("2026-11-24T12:00:00Z"));
const dir = tempDir();
let t: TestApp;

const sendPath = (outboundId: string) => `/api/v0.1/${outboundId}/messages`;
// Both accounts force test mode: messages are validated and recorded (E12), never sent.
const accounts = [
  { ...ACCOUNT_A, extra: "test_mode = true" },
  { ...ACCOUNT_B, extra: "test_mode = true" },
];

async function send(
  body: unknown,
  headers: Record<string, string> = {},
  account = ACCOUNT_A,
): Promise<{ status: number; body: any; replayed: string | null; text: string }> {
  const res = await t.call("POST", sendPath(account.outboundId), { auth: bearer(account.smtpKey), body, headers });
  const text = await res.text();
  return { status: res.status, body: JSON.parse(text), replayed: res.headers.get("idempotent-replayed"), text };
}

/** The subjects of the messages the outbound account has sent (E12), oldest first. */
async function sentSubjects(account = ACCOUNT_A): Promise<string[]> {
  const res = await t.json("GET", `/api/v0.1/${account.id}/outbound_messages?outbound_account_id=${account.outboundId}`, {
    auth: bearer(account.token),
  });
  return res.body.map((m: { subject: string }) => m.subject).reverse();
}

const message = (subject: string) => ({ from: "ann@sender.test", to: "bob@example.org", subject, plain: "hello" });

async function start(): Promise<TestApp> {
  return startTestApp({ dataDir: dir.path, clock, submission: true, accounts });
}

beforeAll(async () => {
  t = await start();
  for (const account of [ACCOUNT_A, ACCOUNT_B]) {
    const created = await t.json("POST", `/api/v0.1/${account.id}/sending_domains`, {
      auth: bearer(account.token),
      body: { domain: "sender.test" },
    });
    expect(created.status).toBe(201);
  }
});
afterAll(async () => {
  await t.stop();
  dir.remove();
});

describe("E11 with an Idempotency-Key", () => {
  test("the same key and body: the first answer again, marked as a replay; one message", async () => {
    const first = await send(message("once"), { "Idempotency-Key": "order-1001" });
    expect({ status: first.status, replayed: first.replayed }).toEqual({ status: 202, replayed: null });
    const again = await send(message("once"), { "Idempotency-Key": "order-1001" });
    expect({ status: again.status, replayed: again.replayed, text: again.text }).toEqual({
      status: 202,
      replayed: "true",
      text: first.text,
    });
    expect(await sentSubjects()).toEqual(["once"]);
  });

  test("X-Idempotency-Key is the same key", async () => {
    const first = await send(message("alias"), { "X-Idempotency-Key": "order-1002" });
    const again = await send(message("alias"), { "Idempotency-Key": "order-1002" });
    expect({ status: again.status, replayed: again.replayed, id: again.body.id }).toEqual({
      status: 202,
      replayed: "true",
      id: first.body.id,
    });
    expect((await sentSubjects()).filter((s) => s === "alias")).toEqual(["alias"]);
  });

  test("the same key with another body: 409, nothing sent", async () => {
    await send(message("first body"), { "Idempotency-Key": "order-1003" });
    const other = await send(message("second body"), { "Idempotency-Key": "order-1003" });
    expect(other.body).toEqual({
      status: 409,
      error: "Idempotency-Key: already used with another request body; use a new key for a new message",
    });
    expect(await sentSubjects()).not.toContain("second body");
  });

  test("two requests at once with one key: the second, sent while the first is still uploading its body, is 409; one message", async () => {
    const body = JSON.stringify(message("concurrent"));
    const key = "order-1004";
    let finishUpload!: () => void;
    const uploadHeld = new Promise<void>((resolve) => (finishUpload = resolve));
    const encoder = new TextEncoder();
    const slowBody = new ReadableStream<Uint8Array>({
      async start(controller) {
        controller.enqueue(encoder.encode(body.slice(0, 10)));
        await uploadHeld;
        controller.enqueue(encoder.encode(body.slice(10)));
        controller.close();
      },
    });
    const first = fetch(`http://127.0.0.1:${t.app.httpPort}${sendPath(ACCOUNT_A.outboundId)}`, {
      method: "POST",
      headers: { authorization: bearer(ACCOUNT_A.smtpKey), "content-type": "application/json", "idempotency-key": key },
      body: slowBody,
      duplex: "half",
    } as RequestInit);
    // The first request holds the key once its headers are in (its row, still without an answer).
    const db = new Database(join(dir.path, "postroom.db"), { readonly: true });
    await eventually(
      () => db.query("SELECT 1 FROM idempotency_keys WHERE key = ? AND answer IS NULL").get(key),
      5000,
      "the first request's claim",
    );
    db.close();
    const second = await send(message("concurrent"), { "Idempotency-Key": key });
    expect(second.body).toEqual({
      status: 409,
      error: "Idempotency-Key: a request with this key is still being processed; send it again once that one is answered",
    });
    finishUpload();
    const firstRes = await first;
    expect(firstRes.status).toBe(202);
    const firstText = await firstRes.text();
    // Once answered, the same request is a replay of that answer.
    const third = await send(message("concurrent"), { "Idempotency-Key": key });
    expect({ status: third.status, replayed: third.replayed, text: third.text }).toEqual({
      status: 202,
      replayed: "true",
      text: firstText,
    });
    expect((await sentSubjects()).filter((s) => s === "concurrent")).toEqual(["concurrent"]);
  });

  test("a key of up to 256 characters; longer, or empty, is 422", async () => {
    expect((await send(message("long key"), { "Idempotency-Key": "k".repeat(256) })).status).toBe(202);
    expect((await send(message("too long"), { "Idempotency-Key": "k".repeat(257) })).body).toEqual({
      status: 422,
      error: "Idempotency-Key: at most 256 characters",
    });
    expect((await send(message("alias too long"), { "X-Idempotency-Key": "k".repeat(257) })).body).toEqual({
      status: 422,
      error: "X-Idempotency-Key: at most 256 characters",
    });
    expect((await send(message("empty"), { "Idempotency-Key": " " })).body).toEqual({
      status: 422,
      error: "Idempotency-Key: must not be empty",
    });
    expect((await send(message("both"), { "Idempotency-Key": "a", "X-Idempotency-Key": "b" })).body).toEqual({
      status: 422,
      error: "Idempotency-Key and X-Idempotency-Key differ: give one of them",
    });
    expect(await sentSubjects()).not.toContain("too long");
  });

  test("a refused request does not hold its key: corrected, it is sent", async () => {
    const refused = await send({ ...message("fixed"), to: "not an address" }, { "Idempotency-Key": "order-1005" });
    expect(refused.status).toBe(422);
    const fixed = await send(message("fixed"), { "Idempotency-Key": "order-1005" });
    expect({ status: fixed.status, replayed: fixed.replayed }).toEqual({ status: 202, replayed: null });
  });

  test("keys belong to the outbound account: another one's same key and body is its own message", async () => {
    const a = await send(message("per account"), { "Idempotency-Key": "order-1006" });
    const b = await send(message("per account"), { "Idempotency-Key": "order-1006" }, ACCOUNT_B);
    expect({ status: b.status, replayed: b.replayed }).toEqual({ status: 202, replayed: null });
    expect(b.body.id).not.toBe(a.body.id);
    expect(await sentSubjects(ACCOUNT_B)).toEqual(["per account"]);
  });

  test("remembered across a restart, for 24 hours (a claim left by a crash is not); after that the same request is a new message", async () => {
    const first = await send(message("a day"), { "Idempotency-Key": "order-1007" });
    await t.stop();
    // As a crash leaves it: a key claimed by a request that never got its answer.
    const db = new Database(join(dir.path, "postroom.db"));
    db.query("INSERT INTO idempotency_keys (outbound_account_id, scope, key, created_at) VALUES (?, 'api', 'order-crashed', ?)").run(
      ACCOUNT_A.outboundId,
      clock.nowMs(),
    );
    db.close();
    t = await start();
    const afterCrash = await send(message("after a crash"), { "Idempotency-Key": "order-crashed" });
    expect({ status: afterCrash.status, replayed: afterCrash.replayed }).toEqual({ status: 202, replayed: null });
    clock.advance(24 * HOUR - 1);
    const within = await send(message("a day"), { "Idempotency-Key": "order-1007" });
    expect({ replayed: within.replayed, text: within.text }).toEqual({ replayed: "true", text: first.text });
    clock.advance(1);
    const after = await send(message("a day"), { "Idempotency-Key": "order-1007" });
    expect({ status: after.status, replayed: after.replayed }).toEqual({ status: 202, replayed: null });
    expect(after.body.id).not.toBe(first.body.id);
    expect((await sentSubjects()).filter((s) => s === "a day")).toEqual(["a day", "a day"]);
  });
});

describe("SMTP submission: a Message-ID sent again", () => {
  const transport = (account = ACCOUNT_A) =>
    nodemailer.createTransport({
      host: "127.0.0.1",
      port: t.app.submissionPort!,
      secure: false,
      ignoreTLS: true,
      auth: { user: account.outboundId, pass: account.smtpKey },
    });
  const submit = async (subject: string, messageId?: string, account = ACCOUNT_A) => {
    const tr = transport(account);
    try {
      return (
        await tr.sendMail({ from: "ann@sender.test", to: "bob@example.org", subject, text: "hello", ...(messageId ? { messageId } : {}) })
      ).response;
    } finally {
      tr.close();
    }
  };

  test("is answered with the first message's ID and not queued again, within 24 hours", async () => {
    const first = await submit("submitted twice", "<resend-1@sender.test>");
    expect(first).toMatch(/^250 2\.0\.0 Thanks! Queued as: [0-9a-f-]{36}$/);
    expect(await submit("submitted twice", "<resend-1@sender.test>")).toBe(first);
    expect((await sentSubjects()).filter((s) => s === "submitted twice")).toEqual(["submitted twice"]);
    clock.advance(24 * HOUR);
    expect(await submit("submitted twice", "<resend-1@sender.test>")).not.toBe(first);
    expect((await sentSubjects()).filter((s) => s === "submitted twice")).toEqual(["submitted twice", "submitted twice"]);
  });

  test("per outbound account; and messages without a Message-ID of their own are each queued", async () => {
    const a = await submit("same id, two accounts", "<shared-2@sender.test>");
    const b = await submit("same id, two accounts", "<shared-2@sender.test>", ACCOUNT_B);
    expect(b).not.toBe(a);
    expect(await sentSubjects(ACCOUNT_B)).toContain("same id, two accounts");
    // nodemailer makes a fresh Message-ID for each message it sends.
    await submit("no id given");
    await submit("no id given");
    expect((await sentSubjects()).filter((s) => s === "no id given")).toEqual(["no id given", "no id given"]);
  });
});
