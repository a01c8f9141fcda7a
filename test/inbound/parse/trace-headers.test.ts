// Our Received and Return-Path lines (src/inbound/parse/trace-headers.ts): what they say, how
// they fold, that nothing a client sends can break them, and how they join the message.
import { describe, expect, test } from "bun:test";
import {
  addressLiteral,
  receivedHeader,
  returnPathHeader,
  rfc5322Date,
  withProtocol,
  withTraceHeaders,
  type ReceivedFacts,
} from "../../../src/inbound/parse/trace-headers.ts";
import { extractMessage } from "../../../src/inbound/parse/extract.ts";

const NOW = Date.parse("2026-11-24T06:39:11Z");
const base: ReceivedFacts = {
  helo: "client.example.org",
  remoteIp: "192.0.2.1",
  ehlo: true,
  tls: null,
  authenticated: false,
  hostname: "mx.example.com",
  id: "0123456789abcdef",
  recipients: ["rcpt@in.example.com"],
  nowMs: NOW,
};
const TLS = { protocol: "TLSv1.3", cipher: "TLS_AES_256_GCM_SHA384" };

describe("receivedHeader", () => {
  const cases: [name: string, facts: Partial<ReceivedFacts>, expected: string][] = [
    [
      "EHLO, one recipient: a for clause, then the date",
      {},
      "Received: from client.example.org ([192.0.2.1])\r\n\tby mx.example.com (Postroom) with ESMTP id 0123456789abcdef\r\n\tfor <rcpt@in.example.com>; Tue, 24 Nov 2026 06:39:11 +0000\r\n",
    ],
    [
      "two recipients: no for clause (it would tell each who else got it)",
      { recipients: ["a@in.example.com", "b@in.example.com"] },
      "Received: from client.example.org ([192.0.2.1])\r\n\tby mx.example.com (Postroom) with ESMTP id 0123456789abcdef;\r\n\tTue, 24 Nov 2026 06:39:11 +0000\r\n",
    ],
    [
      "STARTTLS: ESMTPS and the protocol and cipher",
      { tls: TLS },
      "Received: from client.example.org ([192.0.2.1])\r\n\t(using TLSv1.3 with cipher TLS_AES_256_GCM_SHA384)\r\n\tby mx.example.com (Postroom) with ESMTPS id 0123456789abcdef\r\n\tfor <rcpt@in.example.com>; Tue, 24 Nov 2026 06:39:11 +0000\r\n",
    ],
    [
      "HELO: SMTP",
      { ehlo: false, helo: "old.example.org" },
      "Received: from old.example.org ([192.0.2.1])\r\n\tby mx.example.com (Postroom) with SMTP id 0123456789abcdef\r\n\tfor <rcpt@in.example.com>; Tue, 24 Nov 2026 06:39:11 +0000\r\n",
    ],
    [
      "IPv6 client: an IPv6 address literal",
      { remoteIp: "2001:DB8::1" },
      "Received: from client.example.org ([IPv6:2001:db8::1])\r\n\tby mx.example.com (Postroom) with ESMTP id 0123456789abcdef\r\n\tfor <rcpt@in.example.com>; Tue, 24 Nov 2026 06:39:11 +0000\r\n",
    ],
    [
      "IPv4-mapped IPv6: the IPv4 literal",
      { remoteIp: "::ffff:192.0.2.7" },
      "Received: from client.example.org ([192.0.2.7])\r\n\tby mx.example.com (Postroom) with ESMTP id 0123456789abcdef\r\n\tfor <rcpt@in.example.com>; Tue, 24 Nov 2026 06:39:11 +0000\r\n",
    ],
    [
      "a HELO address literal kept as it is",
      { helo: "[IPv6:2001:db8::1]" },
      "Received: from [IPv6:2001:db8::1] ([192.0.2.1])\r\n\tby mx.example.com (Postroom) with ESMTP id 0123456789abcdef\r\n\tfor <rcpt@in.example.com>; Tue, 24 Nov 2026 06:39:11 +0000\r\n",
    ],
    [
      "a HELO name with CR LF, parentheses, a semicolon: each such character a ?",
      { helo: "evil.example\r\nX-Injected: yes (fake); by" },
      "Received: from evil.example??X-Injected:?yes??fake???by ([192.0.2.1])\r\n\tby mx.example.com (Postroom) with ESMTP id 0123456789abcdef\r\n\tfor <rcpt@in.example.com>; Tue, 24 Nov 2026 06:39:11 +0000\r\n",
    ],
    [
      "an empty HELO name: unknown; an address that is no IP: no TCP-info",
      { helo: "", remoteIp: "not-an-ip" },
      "Received: from unknown\r\n\tby mx.example.com (Postroom) with ESMTP id 0123456789abcdef\r\n\tfor <rcpt@in.example.com>; Tue, 24 Nov 2026 06:39:11 +0000\r\n",
    ],
    [
      "a recipient with CR LF, angle brackets or a semicolon: each a ?",
      { recipients: ['"a>b;\r\nX: y"@in.example.com'] },
      'Received: from client.example.org ([192.0.2.1])\r\n\tby mx.example.com (Postroom) with ESMTP id 0123456789abcdef\r\n\tfor <"a?b???X: y"@in.example.com>; Tue, 24 Nov 2026 06:39:11 +0000\r\n',
    ],
    [
      "a recipient too long for a header line: no for clause",
      { recipients: [`${"x".repeat(1000)}@in.example.com`] },
      "Received: from client.example.org ([192.0.2.1])\r\n\tby mx.example.com (Postroom) with ESMTP id 0123456789abcdef;\r\n\tTue, 24 Nov 2026 06:39:11 +0000\r\n",
    ],
  ];
  for (const [name, facts, expected] of cases) test(name, () => expect(receivedHeader({ ...base, ...facts })).toBe(expected));

  test("a HELO name of any length keeps every line under 998 octets: cut at 255, a long recipient kept", () => {
    const text = receivedHeader({ ...base, helo: "a".repeat(5000), recipients: [`${"b".repeat(890)}@x.example`] });
    expect(text).toBe(
      `Received: from ${"a".repeat(255)} ([192.0.2.1])\r\n\tby mx.example.com (Postroom) with ESMTP id 0123456789abcdef\r\n\tfor <${"b".repeat(890)}@x.example>; Tue, 24 Nov 2026 06:39:11 +0000\r\n`,
    );
    for (const line of text.split("\r\n")) expect(line.length).toBeLessThan(998);
  });
});

describe("withProtocol (RFC 3848)", () => {
  const cases: [ehlo: boolean, tls: boolean, auth: boolean, expected: string][] = [
    [false, false, false, "SMTP"],
    [false, true, true, "SMTP"],
    [true, false, false, "ESMTP"],
    [true, true, false, "ESMTPS"],
    [true, false, true, "ESMTPA"],
    [true, true, true, "ESMTPSA"],
  ];
  for (const [ehlo, tls, auth, expected] of cases)
    test(`ehlo=${ehlo} tls=${tls} auth=${auth}: ${expected}`, () => expect(withProtocol(ehlo, tls, auth)).toBe(expected));
});

describe("addressLiteral", () => {
  const cases: [ip: string, expected: string | null][] = [
    ["127.0.0.1", "[127.0.0.1]"],
    ["::1", "[IPv6:::1]"],
    ["::FFFF:10.0.0.1", "[10.0.0.1]"],
    ["fe80::1", "[IPv6:fe80::1]"],
    ["", null],
    ["1.2.3.4]\r\nX: y", null],
  ];
  for (const [ip, expected] of cases) test(JSON.stringify(ip), () => expect(addressLiteral(ip)).toBe(expected));
});

describe("rfc5322Date", () => {
  const cases: [ms: number, expected: string][] = [
    [NOW, "Tue, 24 Nov 2026 06:39:11 +0000"],
    [NOW + 999, "Tue, 24 Nov 2026 06:39:11 +0000"],
    [NOW + 1000, "Tue, 24 Nov 2026 06:39:12 +0000"],
    [NOW, "Tue, 24 Nov 2026 06:39:11 +0000"],
    [Date.parse("2027-01-02T03:04:05.678Z"), "Sat, 02 Jan 2027 03:04:05 +0000"],
  ];
  // In this order: the same second again, the next one, and back, past the one kept.
  test("each time in order", () => expect(cases.map(([ms]) => rfc5322Date(ms))).toEqual(cases.map(([, text]) => text)));
});

describe("returnPathHeader", () => {
  const cases: [mailFrom: string, expected: string][] = [
    ["joerg@sender.test", "Return-Path: <joerg@sender.test>\r\n"],
    ["", "Return-Path: <>\r\n"],
    ["a\r\nX-Injected: yes@x.test", "Return-Path: <a??X-Injected: yes@x.test>\r\n"],
  ];
  for (const [mailFrom, expected] of cases) test(JSON.stringify(mailFrom), () => expect(returnPathHeader(mailFrom)).toBe(expected));
});

describe("withTraceHeaders", () => {
  const TRACE = "Return-Path: <s@x.test>\r\nReceived: from a ([192.0.2.1])\r\n\tby mx id 1; date\r\n";
  const cases: [name: string, raw: string, expected: string][] = [
    ["in front of the message, which is otherwise unchanged", "Subject: hi\r\n\r\nbody\r\n", TRACE + "Subject: hi\r\n\r\nbody\r\n"],
    [
      "the sender's Return-Path removed, ours kept",
      "Return-Path: <forged@x.test>\r\nSubject: hi\r\n\r\nbody\r\n",
      TRACE + "Subject: hi\r\n\r\nbody\r\n",
    ],
    [
      "a folded Return-Path removed with its continuation, in any case",
      "Subject: hi\r\nRETURN-PATH :\r\n <forged@x.test>\r\nTo: a@b\r\n\r\nbody\r\n",
      TRACE + "Subject: hi\r\nTo: a@b\r\n\r\nbody\r\n",
    ],
    [
      "a Return-Path as the last header: the blank line stays one",
      "Subject: hi\r\nReturn-Path: <f@x.test>\r\n\r\nbody\r\n",
      TRACE + "Subject: hi\r\n\r\nbody\r\n",
    ],
    ["with LF line ends too", "Subject: hi\nReturn-Path: <f@x.test>\n\nbody\n", TRACE + "Subject: hi\n\nbody\n"],
    [
      "a Return-Path after the first blank line, whatever its line ends, is the body's",
      "Subject: hi\n\r\nReturn-Path: <b@x.test>\r\n",
      TRACE + "Subject: hi\n\r\nReturn-Path: <b@x.test>\r\n",
    ],
    [
      "a Return-Path line in the body is the body's",
      "Subject: hi\r\n\r\nReturn-Path: <b@x.test>\r\n",
      TRACE + "Subject: hi\r\n\r\nReturn-Path: <b@x.test>\r\n",
    ],
    ["X-Return-Path is another field", "X-Return-Path: <k@x.test>\r\n\r\nb\r\n", TRACE + "X-Return-Path: <k@x.test>\r\n\r\nb\r\n"],
    [
      "orphan continuation lines at the top dropped: they would continue our Received line",
      "\tby forged.example id 0\r\n for <x@y>\r\nSubject: hi\r\n\r\nb\r\n",
      TRACE + "Subject: hi\r\n\r\nb\r\n",
    ],
    ["no header section: ours become it", "\r\nbody only\r\n", TRACE + "\r\nbody only\r\n"],
    ["no body", "Subject: hi\r\n", TRACE + "Subject: hi\r\n"],
  ];
  for (const [name, raw, expected] of cases)
    test(name, () => expect(withTraceHeaders(Buffer.from(raw, "latin1"), TRACE).toString("latin1")).toBe(expected));

  test("8-bit bytes of the message pass through untouched", () => {
    const raw = Buffer.concat([
      Buffer.from("Return-Path: <x@y>\r\nSubject: ", "latin1"),
      Buffer.from([0xc3, 0xa9, 0xe9]),
      Buffer.from("\r\n\r\n", "latin1"),
      Buffer.from([0xff, 0x00, 0x80]),
    ]);
    const out = withTraceHeaders(raw, "Return-Path: <>\r\n");
    expect(out).toEqual(
      Buffer.concat([
        Buffer.from("Return-Path: <>\r\nSubject: ", "latin1"),
        Buffer.from([0xc3, 0xa9, 0xe9]),
        Buffer.from("\r\n\r\n", "latin1"),
        Buffer.from([0xff, 0x00, 0x80]),
      ]),
    );
  });

  test("the parser sees our lines first: received as an array, ours on top, one return_path", async () => {
    const raw = Buffer.from(
      "Received: from relay.sender.test by smtp.sender.test; Mon, 23 Nov 2026 10:00:00 +0000\r\nReturn-Path: <forged@x.test>\r\nSubject: hi\r\n\r\nbody\r\n",
    );
    const trace = returnPathHeader("s@sender.test") + receivedHeader(base);
    const { content } = await extractMessage(withTraceHeaders(raw, trace), { maxHeaderBytes: 65536, maxMimeDepth: 20, maxMimeParts: 100 });
    expect(content.headers.return_path).toBe("<s@sender.test>");
    expect(content.headers.received).toEqual([
      "from client.example.org ([192.0.2.1])\tby mx.example.com (Postroom) with ESMTP id 0123456789abcdef\tfor <rcpt@in.example.com>; Tue, 24 Nov 2026 06:39:11 +0000",
      "from relay.sender.test by smtp.sender.test; Mon, 23 Nov 2026 10:00:00 +0000",
    ]);
  });
});
