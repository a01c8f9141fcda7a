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
import type { StatusRepo } from "../../src/inbound/statuses/statuses.port.ts";

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
    // Test mode: submitted and E11 messages are checked and recorded (E12), never sent.
    t = await startTestAppOn(engine, { inbound: true, submission: true, accounts: [{ ...ACCOUNT_A, extra: "test_mode = true" }] });
    expect((await t.json("POST", `${A}/sending_domains`, { auth, body: { domain: "sender.test" } })).status).toBe(201);
  });
  afterAll(async () => {
    await t?.stop();
    await target?.stop();
  });

  async function addressFor(path: string, extra: Record<string, unknown> = {}): Promise<{ id: string; email: string }> {
    const res = await t.json("POST", `${A}/addresses`, { auth, body: { target: target.url(path), target_format: "json+n", ...extra } });
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

  const statuses = async (addressId: string) =>
    (await t.json("GET", `${A}/incoming_statuses?address_id=${addressId}`, { auth })).body as any[];

  it("a NUL in the Subject and the Message-ID: 250 at once, one POST, the status listed with U+FFFD in its place", async () => {
    const addr = await addressFor("/nul");
    const results = await sendAsAnMta(addr.email, message(addr.email, "Invoice\0 42", "<abc\0def@sender.test>"));
    expect(target.at("/nul")).toHaveLength(1);
    expect(results.map((r) => r.response)).toEqual(["250 2.0.0 Accepted"]);
    const [s] = await statuses(addr.id);
    expect(s).toMatchObject({ subject: "Invoice\uFFFD 42", status: "200", status_category: "successful" });
    expect(s.message_id).toContain("\uFFFD");
    expect(JSON.stringify(s)).not.toContain("\\u0000");
  });

  it("an attachment kept on the appliance whose file name holds NUL (and SOH): 250, one POST, the file served", async () => {
    const addr = await addressFor("/nul-file", { attachments: { store: "local" } });
    const raw = [
      `From: alice@sender.test`,
      `To: ${addr.email}`,
      `Subject: with a file`,
      `Message-ID: <file@sender.test>`,
      `MIME-Version: 1.0`,
      `Content-Type: multipart/mixed; boundary="b"`,
      ``,
      `--b`,
      `Content-Type: text/plain`,
      ``,
      `see attached`,
      `--b`,
      `Content-Type: text/csv; name="report\0\x01.csv"`,
      `Content-Disposition: attachment; filename="report\0\x01.csv"`,
      ``,
      `a,b`,
      `--b--`,
      ``,
    ].join("\r\n");
    const results = await sendAsAnMta(addr.email, raw);
    expect(target.at("/nul-file")).toHaveLength(1);
    expect(results.map((r) => r.response)).toEqual(["250 2.0.0 Accepted"]);
    const [att] = target.at("/nul-file")[0]!.json.attachments;
    // The target gets the name as parsed; only what is stored (and the URL made from it) has U+FFFD.
    expect(att.file_name).toBe("report\u0000\u0001.csv");
    expect(decodeURIComponent(new URL(att.url).pathname)).toEndWith("/report\uFFFD\u0001.csv");
    const got = await t.call("GET", new URL(att.url).pathname + new URL(att.url).search);
    expect(got.status).toBe(200);
    expect(await got.text()).toStartWith("a,b");
  });

  it("API parameters holding NUL: 422 naming the parameter, never 500", async () => {
    const addr = await addressFor("/api");
    const inQuery = await t.json("GET", `${A}/incoming_statuses?address_id=${addr.id}&query=a%00b`, { auth });
    expect(inQuery).toMatchObject({ status: 422, body: { status: 422, error: "query query: must not contain NUL (\\u0000)" } });
    const inSearch = await t.json("GET", `${A}/addresses?query=x%00`, { auth });
    expect(inSearch).toMatchObject({ status: 422, body: { status: 422, error: "query query: must not contain NUL (\\u0000)" } });
    const inPath = await t.json("GET", `${A}/addresses/a%00b`, { auth });
    expect(inPath).toMatchObject({ status: 422, body: { status: 422, error: "path addressId: must not contain NUL (\\u0000)" } });
    const inAddressId = await t.json("GET", `${A}/incoming_statuses?address_id=${addr.id}%00`, { auth });
    expect(inAddressId).toMatchObject({ status: 422, body: { status: 422, error: "query address_id: must not contain NUL (\\u0000)" } });
    const inBody = await t.json("PATCH", `${A}/addresses/${addr.id}`, { auth, body: { nickname: "a\u0000b" } });
    expect(inBody).toMatchObject({ status: 422, body: { status: 422, error: "nickname: must not contain control characters" } });
  });

  it("SMTP submission: a NUL in Subject, Message-ID or tags is refused, 554 5.6.0 naming the field; nothing is queued", async () => {
    const submit = (headers: string) =>
      sendWithNodemailer(
        t.app.submissionPort!,
        {
          envelope: { from: "ann@sender.test", to: ["bob@example.org"] },
          raw: Buffer.from(`${headers}To: bob@example.org\r\nDate: Fri, 27 Nov 2026 17:00:00 +0000\r\n\r\nHello\r\n`),
        },
        { auth: { user: ACCOUNT_A.outboundId, pass: ACCOUNT_A.smtpKey } },
      );
    const refusal = (field: string) => `554 5.6.0 the ${field} field holds NUL (U+0000); remove it and send the message again`;
    const cases: [string, string][] = [
      ["From: ann@sender.test\r\nSubject: Invoice\0 42\r\n", refusal("Subject")],
      ["From: ann@sender.test\r\nSubject: =?utf-8?q?Invoice=00_42?=\r\n", refusal("Subject")],
      ["From: ann@sender.test\r\nSubject: ok\r\nMessage-ID: <a\0b@sender.test>\r\n", refusal("Message-ID")],
      ["From: ann@sender.test\r\nSubject: ok\r\nX-Postroom-Tags: a\0b\r\n", refusal("X-Postroom-Tags")],
      // The author check refused control characters in From already (an address list with NUL
      // in To or Cc does not parse: nothing of it is stored, the envelope decides who gets it).
      ['From: "Ann\0" <ann@sender.test>\r\nSubject: ok\r\n', "550 5.7.1 the From header holds control characters"],
    ];
    for (const [headers, reply] of cases) expect((await submit(headers)).response).toBe(reply);
    const ok = await submit("From: ann@sender.test\r\nSubject: fine\r\n");
    expect(ok.response).toStartWith("250 2.0.0 Thanks! Queued as: ");
    const sent = await t.json("GET", `${A}/outbound_messages?outbound_account_id=${ACCOUNT_A.outboundId}`, { auth });
    expect(sent.body.map((m: { subject: string }) => m.subject)).toEqual(["fine"]);
  });

  it("E11: a NUL in a JSON string field or a header: 422 naming the field", async () => {
    const send = (body: unknown) => t.json("POST", `/api/v0.1/${ACCOUNT_A.outboundId}/messages`, { auth: bearer(ACCOUNT_A.smtpKey), body });
    const base = { from: "ann@sender.test", to: "bob@example.org", subject: "s", plain: "hello" };
    expect((await send({ ...base, subject: "a\u0000b" })).body).toEqual({
      status: 422,
      error: "subject: must not contain control characters",
    });
    expect((await send({ ...base, headers: { "X-Note": "a\u0000" } })).body).toEqual({
      status: 422,
      error: "headers.X-Note: must not contain control characters",
    });
    expect((await send({ ...base, tags: ["a\u0000"] })).body).toEqual({
      status: 422,
      error: "tags[0]: must not contain control characters",
    });
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
    expect(target.at("/store-fails")).toHaveLength(1);
    expect(results.map((r) => r.response)).toEqual(["250 2.0.0 Accepted"]);
    // Written again once the store takes it (first retry after a second).
    const deadline = Date.now() + 10_000;
    while ((await statuses(addr.id)).length === 0 && Date.now() < deadline) await Bun.sleep(200);
    expect((await statuses(addr.id)).map((s) => s.subject)).toEqual(["while the store fails"]);
  }, 20_000);
});

/**
 * A store whose incoming status writes fail. PostgreSQL: a trigger that raises on every
 * insert. SQLite: record() throws, as it does when neither the status journal nor the
 * database can take the rows (a trigger would only fail the journal's later move).
 */
let recordAsItWas: StatusRepo["record"] | null = null;
async function failStatusWrites(t: EngineApp, fail: boolean): Promise<void> {
  if (t.sql) {
    if (fail) {
      await t.sql.unsafe(
        `CREATE FUNCTION refuse_status() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN RAISE EXCEPTION 'injected: status writes fail'; END $$`,
      );
      await t.sql.unsafe(`CREATE TRIGGER refuse_status BEFORE INSERT ON incoming_statuses FOR EACH ROW EXECUTE FUNCTION refuse_status()`);
    } else {
      await t.sql.unsafe(`DROP TRIGGER refuse_status ON incoming_statuses`);
      await t.sql.unsafe(`DROP FUNCTION refuse_status()`);
    }
    return;
  }
  const repo = t.app.repos.statuses;
  if (fail) {
    recordAsItWas = repo.record;
    repo.record = async () => {
      throw new Error("injected: status writes fail");
    };
  } else repo.record = recordAsItWas!;
}
