// NUL (U+0000) never reaches storage, on either engine (issue 31, finding 5). PostgreSQL's
// text cannot hold it: a NUL in a received message's Subject made the status write fail
// after the target had the message, the sender got 451 and sent it again (the target got
// it three times), and a NUL in an API parameter answered 500. A received message's
// header values are replaced (U+FFFD) where they are recorded; the API refuses (422).
// And a status write that fails after the target's 2xx never turns the 250 into a 451.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { bearer } from "../helpers/app.ts";
import { ENGINE_NAMES, startTestAppOn, type EngineApp } from "../helpers/engine-app.ts";
import { ACCOUNT_A } from "../helpers/fixtures.ts";
import { postgresAvailable } from "../helpers/postgres.ts";
import { sendWithNodemailer, type SmtpResult } from "../helpers/smtp.ts";
import { TestTarget } from "../helpers/target.ts";
import { requireTools } from "../helpers/tools.ts";

const A = `/api/v0.1/${ACCOUNT_A.id}`;
const auth = bearer(ACCOUNT_A.token);
/** How often a sender (an MTA) tries a message that got 4xx, in these tests. */
const SENDER_TRIES = 3;

describe.each(ENGINE_NAMES)("on %s", (engine) => {
  const it = engine === "PostgreSQL" ? requireTools("postgresql") : test;
  let t: EngineApp;
  let target: TestTarget;

  beforeAll(async () => {
    if (engine === "PostgreSQL" && !postgresAvailable()) return;
    target = TestTarget.start();
    t = await startTestAppOn(engine, { inbound: true });
  });
  afterAll(async () => {
    await t?.stop();
    await target?.stop();
  });

  async function addressFor(path: string): Promise<{ id: string; email: string }> {
    const res = await t.json("POST", `${A}/addresses`, { auth, body: { target: target.url(path), target_format: "json+n" } });
    expect(res.status).toBe(201);
    return res.body;
  }

  /** Sends `raw` as an MTA would: again after a 4xx, up to SENDER_TRIES times. */
  async function sendAsAnMta(to: string, raw: string): Promise<SmtpResult[]> {
    const results: SmtpResult[] = [];
    for (let i = 0; i < SENDER_TRIES; i++) {
      const r = await sendWithNodemailer(t.app.inboundPort!, { envelope: { from: "alice@sender.test", to: [to] }, raw: Buffer.from(raw) });
      results.push(r);
      if (r.code < 400 || r.code >= 500) break;
    }
    return results;
  }

  const message = (to: string, subject: string, messageId: string) =>
    `From: Alice <alice@sender.test>\r\nTo: ${to}\r\nSubject: ${subject}\r\nMessage-ID: ${messageId}\r\nDate: Fri, 27 Nov 2026 17:00:00 +0000\r\n\r\nHello\r\n`;

  const statuses = async (addressId: string) => (await t.json("GET", `${A}/incoming_statuses?address_id=${addressId}`, { auth })).body as any[];

  it("a NUL in the Subject and the Message-ID: 250 at once, one POST, the status listed with U+FFFD in its place", async () => {
    const addr = await addressFor("/nul");
    const results = await sendAsAnMta(addr.email, message(addr.email, "Invoice\0 42", "<abc\0def@sender.test>"));
    expect(results.map((r) => r.response)).toEqual(["250 2.0.0 Accepted"]);
    expect(target.at("/nul")).toHaveLength(1);
    const [s] = await statuses(addr.id);
    expect(s).toMatchObject({ subject: "Invoice\uFFFD 42", status: "200", status_category: "successful" });
    expect(s.message_id).toContain("\uFFFD");
    expect(JSON.stringify(s)).not.toContain("\\u0000");
  });

  it("API parameters holding NUL: 422 naming the parameter, never 500", async () => {
    const addr = await addressFor("/api");
    const inQuery = await t.json("GET", `${A}/incoming_statuses?address_id=${addr.id}&query=a%00b`, { auth });
    expect(inQuery).toMatchObject({ status: 422, body: { status: 422, error: "query query: must not contain control characters" } });
    const inSearch = await t.json("GET", `${A}/addresses?query=x%00`, { auth });
    expect(inSearch).toMatchObject({ status: 422, body: { status: 422, error: "query query: must not contain control characters" } });
    const inPath = await t.json("GET", `${A}/addresses/a%00b`, { auth });
    expect(inPath).toMatchObject({ status: 422, body: { status: 422, error: "path addressId: must not contain control characters" } });
    const inAddressId = await t.json("GET", `${A}/incoming_statuses?address_id=${addr.id}%00`, { auth });
    expect(inAddressId).toMatchObject({ status: 422, body: { status: 422, error: "query address_id: must not contain control characters" } });
    const inBody = await t.json("PATCH", `${A}/addresses/${addr.id}`, { auth, body: { nickname: "a\u0000b" } });
    expect(inBody).toMatchObject({ status: 422, body: { status: 422, error: "nickname: must not contain control characters" } });
  });

  it("the status write failing after the target's 2xx: still 250, one POST, the status stored once the store takes it again", async () => {
    const addr = await addressFor("/store-fails");
    await failStatusWrites(t, true);
    let results: SmtpResult[];
    try {
      results = await sendAsAnMta(addr.email, message(addr.email, "while the store fails", "<fails@sender.test>"));
    } finally {
      await failStatusWrites(t, false);
    }
    expect(results.map((r) => r.response)).toEqual(["250 2.0.0 Accepted"]);
    expect(target.at("/store-fails")).toHaveLength(1);
    // Written again once the store takes it (first retry after a second).
    const deadline = Date.now() + 10_000;
    while ((await statuses(addr.id)).length === 0 && Date.now() < deadline) await Bun.sleep(200);
    expect((await statuses(addr.id)).map((s) => s.subject)).toEqual(["while the store fails"]);
  }, 20_000);
});

/** A store whose incoming status writes fail: a trigger that raises on every insert. */
async function failStatusWrites(t: EngineApp, fail: boolean): Promise<void> {
  if (t.sql) {
    if (fail) {
      await t.sql.unsafe(`CREATE FUNCTION refuse_status() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN RAISE EXCEPTION 'injected: status writes fail'; END $$`);
      await t.sql.unsafe(`CREATE TRIGGER refuse_status BEFORE INSERT ON incoming_statuses FOR EACH ROW EXECUTE FUNCTION refuse_status()`);
    } else {
      await t.sql.unsafe(`DROP TRIGGER refuse_status ON incoming_statuses`);
      await t.sql.unsafe(`DROP FUNCTION refuse_status()`);
    }
    return;
  }
  const { Database } = await import("bun:sqlite");
  const db = new Database(`${t.dataDir}/postroom.db`);
  try {
    db.run(fail ? "CREATE TRIGGER refuse_status BEFORE INSERT ON incoming_statuses BEGIN SELECT RAISE(ABORT, 'injected: status writes fail'); END" : "DROP TRIGGER refuse_status");
  } finally {
    db.close();
  }
}
