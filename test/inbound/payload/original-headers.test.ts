// Headers for the original json and multipart formats: names as the message writes them.
import { describe, expect, test } from "bun:test";
import { headerKey, normalizeHeaders, originalHeaders } from "../../../src/inbound/payload/headers.ts";

const lines = (...raw: string[]) => raw.map((line) => ({ key: line.slice(0, line.indexOf(":")).trim().toLowerCase(), line }));

describe("originalHeaders", () => {
  const cases: [name: string, input: ReturnType<typeof lines>, out: Record<string, string | string[]>][] = [
    [
      "names as written",
      lines("From: a@b.c", "Message-ID: <x@y>", "X-Mailer: m"),
      { From: "a@b.c", "Message-ID": "<x@y>", "X-Mailer": "m" },
    ],
    ["repeated: an array in message order", lines("Received: one", "Received: two"), { Received: ["one", "two"] }],
    ["repeated in another case: under the first spelling", lines("X-Trace: a", "x-trace: b", "X-TRACE: c"), { "X-Trace": ["a", "b", "c"] }],
    ["unfolded and decoded", lines("Subject: =?UTF-8?Q?Gr=C3=BC=C3=9Fe?=\r\n  aus K\u00f6ln"), { Subject: "Grüße  aus Köln" }],
    ["a line without a name is left out", lines(": nothing"), {}],
  ];
  for (const [name, input, out] of cases) test(name, () => expect(originalHeaders(input)).toEqual(out));
});

// Header names are the sender's: ones that are also names of JavaScript's built-ins
// (Object.prototype's) come out as the values the message had, never dropped nor mixed
// with the built-in (issue 31, finding 7).
describe("header names that are JavaScript built-ins", () => {
  const BUILTINS = ["__proto__", "constructor", "toString", "hasOwnProperty", "valueOf", "__defineGetter__"];
  const ownEntries = (o: object) => Object.entries(o);
  test.each(BUILTINS)("%s, once and twice, in both shapes", (name) => {
    const once = lines(`${name}: one`);
    const twice = lines(`${name}: one`, `${name}: two`);
    expect(ownEntries(originalHeaders(once))).toEqual([[name, "one"]]);
    expect(ownEntries(originalHeaders(twice))).toEqual([[name, ["one", "two"]]]);
    expect(ownEntries(normalizeHeaders(once))).toEqual([[headerKey(name), "one"]]);
    expect(ownEntries(normalizeHeaders(twice))).toEqual([[headerKey(name), ["one", "two"]]]);
    expect(JSON.parse(JSON.stringify(originalHeaders(twice)))).toEqual(JSON.parse(`{${JSON.stringify(name)}:["one","two"]}`));
  });
});
