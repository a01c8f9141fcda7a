// The bounce parser on small hand-written messages, and its text-level readers.
import { describe, expect, test } from "bun:test";
import {
  addressIn,
  classOf,
  findRecipient,
  parseBounce,
  parseDsnFields,
  replyClassOf,
  splitOriginal,
  statusOf,
  type BounceClass,
} from "../../src/outbound/bounces/bounce-parse.ts";

/** A guard against a quadratic scan (a hang on hostile input), not a speed target. */
const PER_FILE_LIMIT_MS = 2_000;

const message = (headers: string, body: string) =>
  Buffer.from(`${headers.trim().replace(/\n/g, "\r\n")}\r\n\r\n${body.replace(/\n/g, "\r\n")}`);

describe("parseBounce: small messages", () => {
  test("a human reply mentioning delivery is not a bounce", async () => {
    const raw = message(
      "From: Alice <alice@example.org>\nTo: bounces+x@mta.example.com\nSubject: Re: your order",
      "Thanks, but the parcel could not be delivered to my old address.\n",
    );
    expect(await parseBounce(raw)).toEqual({ kind: "not_bounce" });
  });

  test("vacation replies by header", async () => {
    for (const h of ["X-Autoreply: yes", "Precedence: auto_reply", "Auto-Submitted: auto-replied (vacation)", "X-Autorespond: on"]) {
      expect(await parseBounce(message(`From: bob@example.org\nSubject: Re: hello\n${h}`, "I am away.\n"))).toEqual({ kind: "auto_reply" });
    }
  });

  test("vacation replies by subject, in a few languages", async () => {
    for (const subject of [
      "Out of Office: hello",
      "Automatic reply: hello",
      "Abwesenheitsnotiz: hello",
      "=?UTF-8?Q?R=C3=A9ponse_automatique?= : hello",
      "AutoReply: hello",
    ]) {
      expect(await parseBounce(message(`From: bob@example.org\nSubject: ${subject}`, "Back on Monday.\n"))).toEqual({ kind: "auto_reply" });
    }
  });

  test("a read receipt (disposition-notification) is not an auto-reply", async () => {
    const raw = message(
      'From: bob@example.org\nSubject: Read: hello\nAuto-Submitted: auto-replied\nContent-Type: multipart/report; report-type=disposition-notification; boundary="b"',
      "--b\nContent-Type: text/plain\n\nYour message was read.\n--b--\n",
    );
    expect(await parseBounce(raw)).toEqual({ kind: "not_bounce" });
  });

  test("a DSN without MIME structure is still read field by field", async () => {
    const raw = message(
      "From: MAILER-DAEMON@mx.example.net\nSubject: Undelivered Mail Returned to Sender",
      "Reporting-MTA: dns; mx.example.net\n\nFinal-Recipient: rfc822; Gone@Example.COM\nAction: failed\nStatus: 5.1.1\nDiagnostic-Code: smtp; 550 5.1.1 <gone@example.com>: Recipient address\n rejected: User unknown\n",
    );
    expect(await parseBounce(raw)).toEqual({
      kind: "bounce",
      recipient: "gone@example.com",
      class: "hard",
      status: "5.1.1",
      diagnostic: "550 5.1.1 <gone@example.com>: Recipient address rejected: User unknown",
      reportingMta: "mx.example.net",
    });
  });

  test("empty and malformed input does not throw", async () => {
    for (const raw of [
      Buffer.alloc(0),
      Buffer.from("\r\n\r\n"),
      Buffer.from("garbage without headers"),
      Buffer.from([0xff, 0xfe, 0x00, 0x01]),
    ]) {
      expect((await parseBounce(raw)).kind).toBe("not_bounce");
    }
  });

  test("a one-line megabyte report is answered quickly (no quadratic scans)", async () => {
    const started = performance.now();
    const raw = message(
      "From: MAILER-DAEMON@mx.example.net\nSubject: Mail delivery failed",
      `${"a".repeat(500_000)}@${"b".repeat(500_000)}\n`,
    );
    expect((await parseBounce(raw)).kind).toBe("bounce");
    expect(performance.now() - started).toBeLessThan(PER_FILE_LIMIT_MS);
  });
});

describe("helpers", () => {
  test.each([
    ["smtp; 550 5.1.1 <a@b.example>... User unknown", "5.1.1"],
    ["Sorry, I wasn't able to establish an SMTP connection. (#4.4.1)", "4.4.1"],
    ["550-5.7.26 Unauthenticated email", "5.7.26"],
    ["550 5.1.10 RESOLVER.ADR.RecipientNotFound", "5.1.10"],
    ["Status: 2.1.5", "2.1.5"],
    ["host 10.4.5.6 said", null],
    ["by mx with Exim 4.72", null],
    ["version 5.1.1.2", null],
    ["", null],
  ])("statusOf(%p) = %p", (text, status) => expect(statusOf(text)).toBe(status));

  test.each([
    ["550 5.1.1 user unknown", 5],
    ["Remote host said: 421 4.4.2 Connection timed out", 4],
    ["host mx.example.jp [192.0.2.1]: 554 rejected", 5],
    ["<<< 452 too many recipients", 4],
    ["retry timeout exceeded", null],
    ["message size 450 bytes", null],
  ])("replyClassOf(%p) = %p", (text, klass) => expect(replyClassOf(text)).toBe(klass as never));

  test.each([
    ["5.1.1", "550 5.1.1 User unknown", null, "hard"],
    ["4.4.1", "Connection timed out", null, "soft"],
    ["5.2.2", "552 5.2.2 Mailbox full", null, "soft"],
    ["5.0.0", "552 sorry, mailbox is over quota", null, "soft"],
    ["5.1.1", "", "delayed", "soft"],
    ["5.4.7", "delivery time expired", null, "hard"],
    [null, "550 No such user here", null, "hard"],
    [null, "451 Temporary local problem", null, "soft"],
    [null, "retry timeout exceeded", null, "soft"],
    [null, "Domain not found", null, "hard"],
    [null, "greylisted, please try again later", null, "soft"],
    [null, "The user's mailfolder is full", null, "soft"],
    [null, "There was an error delivering your mail to <expired@example.org>", null, "hard"],
    [null, "", null, "hard"],
  ])("classOf(%p, %p, %p) = %p", (status, text, action, klass) => expect(classOf(status, text, action)).toBe(klass as BounceClass));

  test.each([
    ["rfc822; <Kijitora@Example.JP>", "kijitora@example.jp"],
    ["rfc822;user@localhost", null],
    ["", null],
  ])("addressIn(%p) = %p", (value, address) => expect(addressIn(value)).toBe(address));

  test("parseDsnFields: per-recipient blocks, folded values, a repeated field starts a new block", () => {
    const dsn = parseDsnFields(
      [
        "Reporting-MTA: dns; mx.example.net (tcp-daemon)",
        "",
        "Final-Recipient: rfc822; a@example.com",
        "Action: failed",
        "Status: 5.1.1",
        "Diagnostic-Code: smtp; 550 no",
        " such user",
        "Final-Recipient: rfc822; b@example.com",
        "Action: delayed",
        "Status: 4.4.1",
      ].join("\n"),
    );
    expect(dsn.reportingMta).toBe("mx.example.net");
    expect(dsn.recipients).toEqual([
      { "final-recipient": "rfc822; a@example.com", action: "failed", status: "5.1.1", "diagnostic-code": "smtp; 550 no such user" },
      { "final-recipient": "rfc822; b@example.com", action: "delayed", status: "4.4.1" },
    ]);
  });

  test("splitOriginal: the report ends where the copy of the message begins", () => {
    const { report, original } = splitOriginal(
      "Hi. This is the qmail-send program.\n<a@example.com>:\nno mailbox\n--- Below this line is a copy of the message.\n\nTo: a@example.com\n",
    );
    expect(report).toBe("Hi. This is the qmail-send program.\n<a@example.com>:\nno mailbox\n");
    expect(original).toStartWith("--- Below this line");
  });

  test("findRecipient: the labelled address wins, the sender's own addresses are skipped", () => {
    expect(findRecipient("Could not be delivered to: <x@example.net>\nfrom s@example.org")).toBe("x@example.net");
    expect(findRecipient("from s@example.org\nundeliverable to x@example.net", new Set(["s@example.org"]))).toBe("x@example.net");
    expect(findRecipient("nothing here")).toBeNull();
  });
});
