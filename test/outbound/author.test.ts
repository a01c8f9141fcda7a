import { describe, expect, test } from "bun:test";
import { formatAddress, parseAddressList } from "../../src/outbound/compose/addresses.ts";
import { authorFieldsOf, authorOf } from "../../src/outbound/compose/author.ts";
import { joinMessage, splitMessage } from "../../src/outbound/compose/raw-headers.ts";

/** The decision for a message with these header lines (and a short body). */
const decide = (headers: string) =>
  authorOf(authorFieldsOf(splitMessage(Buffer.from(`${headers}\r\nTo: bob@example.org\r\n\r\nbody\r\n`)).headers));
const ann = { address: "ann@sender.test", name: "" };

describe("authorOf: the one mailbox a message is from, or why there is none", () => {
  test.each([
    // header lines → author address, or the reason
    ["From: ann@sender.test", "ann@sender.test"],
    ["From: Ann <ann@sender.test>", "ann@sender.test"],
    ["From: ann@sender.test (Ann, Sales)", "ann@sender.test"],
    ['From: "Smith, John" <john@sender.test>', "john@sender.test"],
    ["From: =?utf-8?Q?Smith=2C_John?= <john@sender.test>", "john@sender.test"],
    ["From: =?utf-8?Q?ceo=40bank.example=2C?= <ann@sender.test>", "ann@sender.test"],
    ["From: =?utf-8?B?Y2VvQGJhbmsuZXhhbXBsZSwgPG1hbGxvcnlAZXZpbC50ZXN0Pg==?= <ann@sender.test>", "ann@sender.test"],
    ['From: "a <evil@x.test>" <ann@sender.test>', "ann@sender.test"],
    ["From: Ann\r\n <ann@sender.test>", "ann@sender.test"],
    ["From : ann@sender.test", "ann@sender.test"],
    ["From: ann@sender.test\r\nSender: ann@sender.test", "ann@sender.test"],
    ["From: ann@sender.test, bob@sender.test\r\nSender: ann@sender.test", "ann@sender.test"],
    ["From: ceo@bank.example, ann@sender.test\r\nSender: Ann <ann@sender.test>", "ann@sender.test"],
    ["From: ann@sender.test, ceo@bank.example\r\nSender: mallory@evil.test", "mallory@evil.test"],
    ["To: x@example.org", "message has no From header; one naming the sender is required (RFC 5322)"],
    ["From: ann@sender.test\r\nFrom: ceo@bank.example", "message has 2 From headers; RFC 5322 allows one"],
    ["From: ann@sender.test\r\nfrom: ann@sender.test", "message has 2 From headers; RFC 5322 allows one"],
    ["From : ceo@bank.example\r\nFrom: ann@sender.test", "message has 2 From headers; RFC 5322 allows one"],
    ["Subject: s\r\nFrom : ceo@bank.example\r\nFrom: ann@sender.test", "message has 2 From headers; RFC 5322 allows one"],
    [
      "From: ann@sender.test, ceo@bank.example",
      "the From header names 2 addresses; name one, or add a Sender header naming the one that sends",
    ],
    [
      "From: ann@sender.test, ann@sender.test",
      "the From header names 2 addresses; name one, or add a Sender header naming the one that sends",
    ],
    ["From:", "the From header names no address"],
    ["From:   ", "the From header names no address"],
    ["From: <>", "the From header names no address"],
    ["From: Ann", "the From header holds something that is not an email address"],
    ["From: undisclosed-recipients:;", "the From header is a group; it must name the sender's address"],
    ["From: Team: ann@sender.test, bob@sender.test;", "the From header is a group; it must name the sender's address"],
    ["From: ann@sender.test <ceo@bank.example>", "the From header is malformed (text outside its addresses)"],
    ["From: ann@sender.test ceo@bank.example", "the From header is malformed (text outside its addresses)"],
    ["From: Ann <ann@sender.test> <ceo@bank.example>", "the From header is malformed (text outside its addresses)"],
    ["From: Ann <ann@sender.test>, <>", "the From header is malformed (text outside its addresses)"],
    ["From: Ann <@bank.example:ann@sender.test>", "the From header is malformed (text outside its addresses)"],
    ["From: <ann@sender.test", "the From header is malformed (text outside its addresses)"],
    ['From: "Ann <ann@sender.test>', "the From header is malformed (text outside its addresses)"],
    ["From: =?utf-8?Q?a?= ceo@bank.example <ann@sender.test>", "the From header is malformed (text outside its addresses)"],
    ["From: ann@sender.test\r\nSender: a@sender.test\r\nSender: b@sender.test", "message has 2 Sender headers; RFC 5322 allows one"],
    [
      "From: ann@sender.test, bob@sender.test\r\nSender: ann@sender.test, bob@sender.test",
      "the Sender header names 2 addresses; it must name one",
    ],
    ["From: ann@sender.test, bob@sender.test\r\nSender:", "the Sender header names no address"],
    ["From: ann@sender.test\r\nSender: Ops: ann@sender.test;", "the Sender header is a group; it must name the sender's address"],
  ])("%p → %p", (headers, expected) => {
    const d = decide(headers);
    expect(d.ok ? d.author.address : d.reason).toBe(expected);
  });

  test("display names are decoded once parsed; every From and Sender mailbox is named", () => {
    expect(decide("From: =?utf-8?Q?Smith=2C_John?= <john@sender.test>")).toEqual({
      ok: true,
      author: { address: "john@sender.test", name: "Smith, John" },
      named: [{ address: "john@sender.test", name: "Smith, John" }],
    });
    const several = decide("From: ann@sender.test, ceo@bank.example\r\nSender: ann@sender.test");
    expect(several).toEqual({ ok: true, author: ann, named: [ann, { address: "ceo@bank.example", name: "" }, ann] });
    expect(decide("From: ann@sender.test\r\nSender: mallory@evil.test")).toMatchObject({
      author: ann,
      named: [ann, { address: "mallory@evil.test" }],
    });
  });

  test('a first line "From : x" stays a From field when the message is rebuilt (mailsplit took it for an mbox line and dropped it)', () => {
    const m = splitMessage(Buffer.from("From : ann@sender.test\r\nTo: bob@example.org\r\n\r\nbody\r\n"));
    m.headers.set("Message-ID", "<x@y>");
    expect(joinMessage(m).toString()).toBe("Message-ID: <x@y>\r\nFrom: ann@sender.test\r\nTo: bob@example.org\r\n\r\nbody\r\n");
  });

  test("a display name full of syntax reads back as the same mailbox once stored", () => {
    const d = decide("From: =?utf-8?Q?a_=3Cevil=40x.test=3E=2C_=22b=5C?= <ann@sender.test>");
    expect(d.ok && d.author.name).toBe('a <evil@x.test>, "b\\');
    const stored = formatAddress((d as { author: { address: string; name: string } }).author);
    expect(parseAddressList(stored)).toEqual([{ address: "ann@sender.test", name: 'a <evil@x.test>, "b\\' }]);
  });
});

// Issue 31, finding 9: a receiver may show (or a filter align on) a Resent-From or
// Resent-Sender as the one the message comes from, so every mailbox they name is named too
// and needs a domain of the account; a malformed one is refused like a malformed From.
describe("Resent-From and Resent-Sender are named too", () => {
  const named = (headers: string) => {
    const d = decide(headers);
    return d.ok ? d.named.map((a) => a.address) : d.reason;
  };
  test.each([
    // header lines → the named mailboxes, or the reason
    ["From: ann@sender.test\r\nResent-From: mallory@evil.test", ["ann@sender.test", "mallory@evil.test"]],
    ["From: ann@sender.test\r\nResent-Sender: mallory@evil.test", ["ann@sender.test", "mallory@evil.test"]],
    [
      "From: ann@sender.test\r\nresent-from: Ops <ops@sender.test>, mallory@evil.test",
      ["ann@sender.test", "ops@sender.test", "mallory@evil.test"],
    ],
    // Several resent blocks are allowed (RFC 5322 3.6.6): each one's mailboxes are named.
    [
      "From: ann@sender.test\r\nResent-From: a@sender.test\r\nResent-From: b@evil.test",
      ["ann@sender.test", "a@sender.test", "b@evil.test"],
    ],
    [
      "From: ann@sender.test\r\nResent-From: a@sender.test\r\nResent-Sender: s@other.test",
      ["ann@sender.test", "a@sender.test", "s@other.test"],
    ],
    [
      "From: ann@sender.test\r\nResent-From: ann@sender.test <ceo@bank.example>",
      "the Resent-From header is malformed (text outside its addresses)",
    ],
    ["From: ann@sender.test\r\nResent-From: Team: x@evil.test;", "the Resent-From header is a group; it must name the sender's address"],
    ["From: ann@sender.test\r\nResent-Sender: nobody", "the Resent-Sender header holds something that is not an email address"],
    [
      "From: ann@sender.test\r\nResent-Sender: a@sender.test, b@sender.test",
      "the Resent-Sender header names 2 addresses; it must name one",
    ],
  ])("%p → %p", (headers, expected) => {
    expect(named(headers)).toEqual(expected);
  });

  test("the author is still From (or Sender): Resent fields never become it", () => {
    expect(decide("From: ann@sender.test\r\nResent-From: mallory@evil.test")).toMatchObject({ ok: true, author: ann });
  });
});
