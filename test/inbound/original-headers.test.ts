// Headers for the original json and multipart formats: names as the message writes them.
import { describe, expect, test } from "bun:test";
import { originalHeaders } from "../../src/inbound/headers.ts";

const lines = (...raw: string[]) => raw.map((line) => ({ key: line.slice(0, line.indexOf(":")).trim().toLowerCase(), line }));

describe("originalHeaders", () => {
  const cases: [name: string, input: ReturnType<typeof lines>, out: Record<string, string | string[]>][] = [
    ["names as written", lines("From: a@b.c", "Message-ID: <x@y>", "X-Mailer: m"), { From: "a@b.c", "Message-ID": "<x@y>", "X-Mailer": "m" }],
    ["repeated: an array in message order", lines("Received: one", "Received: two"), { Received: ["one", "two"] }],
    ["repeated in another case: under the first spelling", lines("X-Trace: a", "x-trace: b", "X-TRACE: c"), { "X-Trace": ["a", "b", "c"] }],
    ["unfolded and decoded", lines("Subject: =?UTF-8?Q?Gr=C3=BC=C3=9Fe?=\r\n  aus K\u00f6ln"), { Subject: "Grüße  aus Köln" }],
    ["a line without a name is left out", lines(": nothing"), {}],
  ];
  for (const [name, input, out] of cases) test(name, () => expect(originalHeaders(input)).toEqual(out));
});
