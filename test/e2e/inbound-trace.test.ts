// The trace lines a target sees (RFC 5321 section 4.4): our Received line on top of the
// sender's, a Return-Path with the envelope sender, in both formats; envelope.md5 stays
// the MD5 of the message as the sender sent it. Real clients: nodemailer, swaks, and a
// line-level session for what libraries would not send.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { createHash } from "node:crypto";
import { ManualClock } from "../../src/lib/clock.ts";
import { bearer, startTestApp, type TestApp } from "../helpers/app.ts";
import { ACCOUNT_A } from "../helpers/fixtures.ts";
import { runSwaks, sendWithNodemailer } from "../helpers/smtp.ts";
import { SmtpSession } from "../helpers/smtp-session.ts";
import { TestTarget } from "../helpers/target.ts";
import { requireTools } from "../helpers/tools.ts";

const A = `/api/v0.1/${ACCOUNT_A.id}`;
const auth = bearer(ACCOUNT_A.token);
const clock = new ManualClock(Date.parse("2026-11-24T06:39:11Z"));
const DATE = "Tue, 24 Nov 2026 06:39:11 +0000";

let t: TestApp;
let target: TestTarget;

async function address(path: string, format: "json+n" | "multipart+n" = "json+n") {
  const res = await t.json("POST", `${A}/addresses`, { auth, body: { target: target.url(path), target_format: format } });
  expect(res.status).toBe(201);
  return res.body as { id: string; email: string };
}

/** A message that already passed two servers, and carries a Return-Path it should not. */
const relayed = (to: string) =>
  Buffer.from(
    [
      "Return-Path: <forged@elsewhere.test>",
      "Received: from smtp.sender.test (smtp.sender.test [198.51.100.7])",
      "\tby relay.sender.test with ESMTPS id 4XyZ; Tue, 24 Nov 2026 06:39:09 +0000",
      "Received: from laptop by smtp.sender.test; Tue, 24 Nov 2026 06:39:08 +0000",
      "From: alice@sender.test",
      `To: ${to}`,
      "Subject: traced",
      "Message-ID: <traced-1@sender.test>",
      "",
      "hello",
      "",
    ].join("\r\n"),
  );

const OURS = /^from client\.example\.org \(\[127\.0\.0\.1\]\)\tby mx\.postroom\.test \(Postroom\) with ESMTP id ([0-9a-f]{16})/;

beforeAll(async () => {
  target = TestTarget.start();
  t = await startTestApp({ inbound: true, clock });
});
afterAll(async () => {
  await t.stop();
  await target.stop();
});

describe("json+n", () => {
  let addr: { id: string; email: string };
  let raw: Buffer;

  beforeAll(async () => {
    addr = await address("/json");
    raw = relayed(addr.email);
    const sent = await sendWithNodemailer(t.app.inboundPort!, { raw }, { envelope: { from: "alice@sender.test", to: [addr.email] } });
    expect(sent.response).toBe("250 2.0.0 Accepted");
  });

  test("the target sees our Received line first in headers.received, above the sender's own", () => {
    const { headers } = target.at("/json")[0]!.json;
    expect(headers.received).toBeArrayOfSize(3);
    expect(headers.received[0]).toMatch(OURS);
    expect(headers.received[0]).toEndWith(`\tfor <${addr.email}>; ${DATE}`);
    expect(headers.received.slice(1)).toEqual([
      "from smtp.sender.test (smtp.sender.test [198.51.100.7])\tby relay.sender.test with ESMTPS id 4XyZ; Tue, 24 Nov 2026 06:39:09 +0000",
      "from laptop by smtp.sender.test; Tue, 24 Nov 2026 06:39:08 +0000",
    ]);
  });

  test("return_path is the envelope sender, not the Return-Path the message carried", () => {
    expect(target.at("/json")[0]!.json.headers.return_path).toBe("<alice@sender.test>");
  });

  test("the same message sent again: a new Received id; envelope.md5, of the message as sent without our lines, and X-Postroom-Message-Id stay", async () => {
    await sendWithNodemailer(t.app.inboundPort!, { raw }, { envelope: { from: "alice@sender.test", to: [addr.email] } });
    const [first, second] = target.at("/json");
    const idOf = (p: typeof first) => OURS.exec(p!.json.headers.received[0])![1];
    expect(idOf(second)).not.toBe(idOf(first));
    expect(first!.json.envelope.md5).toBe(createHash("md5").update(raw).digest("hex"));
    expect(second!.json.envelope.md5).toBe(first!.json.envelope.md5);
    expect(second!.headers["x-postroom-message-id"]).toBe(first!.headers["x-postroom-message-id"]);
  });
});

test("multipart+n carries the same lines: headers[received][0] is ours, headers[return_path] the sender", async () => {
  const json = await address("/both-json");
  const multi = await address("/both-multi", "multipart+n");
  const raw = Buffer.from(
    `From: alice@sender.test\r\nTo: ${json.email}\r\nReceived: from laptop by smtp.sender.test; Tue, 24 Nov 2026 06:39:08 +0000\r\nSubject: two\r\n\r\nhi\r\n`,
  );
  expect(
    (await sendWithNodemailer(t.app.inboundPort!, { raw }, { envelope: { from: "alice@sender.test", to: [json.email, multi.email] } }))
      .code,
  ).toBe(250);
  const form = await TestTarget.formData(target.at("/both-multi")[0]!);
  const ours = String(form.get("headers[received][0]"));
  expect(ours).toMatch(OURS);
  // Two recipients: no `for` clause, so neither target learns of the other from it.
  expect(ours).toEndWith(`;\t${DATE}`);
  expect(ours).not.toContain(json.email);
  expect(form.get("headers[received][1]")).toBe("from laptop by smtp.sender.test; Tue, 24 Nov 2026 06:39:08 +0000");
  expect(form.get("headers[return_path]")).toBe("<alice@sender.test>");
  // One transaction, one Received line: both targets see the same.
  expect(target.at("/both-json")[0]!.json.headers.received[0]).toBe(ours);
});

requireTools("swaks")("a bounce (null sender, sent by swaks) has return_path <>", async () => {
  const addr = await address("/null-sender");
  const { code, transcript } = await runSwaks([
    "--server",
    "127.0.0.1",
    "--port",
    String(t.app.inboundPort),
    "--helo",
    "mta.sender.test",
    "--from",
    "<>",
    "--to",
    addr.email,
    "--header",
    "Subject: Undelivered Mail",
  ]);
  expect(code).toBe(0);
  expect(transcript).toContain("<-  250 2.0.0 Accepted");
  const { headers, envelope } = target.at("/null-sender")[0]!.json;
  expect(envelope.from).toBe("");
  expect(headers.return_path).toBe("<>");
  expect(headers.received).toStartWith("from mta.sender.test ([127.0.0.1])\tby mx.postroom.test (Postroom) with ESMTP id ");
});

test("a client that says HELO gets SMTP; what its HELO name holds cannot forge parts of our line", async () => {
  const addr = await address("/helo");
  const { session } = await SmtpSession.open(t.app.inboundPort!);
  expect(await session.command("HELO evil(by.trusted.example);x")).toStartWith("250");
  expect(await session.command("MAIL FROM:<alice@sender.test>")).toStartWith("250");
  expect(await session.command(`RCPT TO:<${addr.email}>`)).toStartWith("250");
  expect(await session.data("Subject: helo\r\n\r\nhi\r\n")).toBe("250 2.0.0 Accepted");
  await session.close();
  const { headers, envelope } = target.at("/helo")[0]!.json;
  expect(envelope.helo_domain).toBe("evil(by.trusted.example);x");
  expect(headers.received).toMatch(
    /^from evil\?by\.trusted\.example\?\?x \(\[127\.0\.0\.1\]\)\tby mx\.postroom\.test \(Postroom\) with SMTP id [0-9a-f]{16}\tfor </,
  );
});
