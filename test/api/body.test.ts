// The depth scan that runs on a request body's bytes before JSON.parse.
import { describe, expect, test } from "bun:test";
import { jsonDepthExceeds } from "../../src/http/body.ts";

const bytes = (text: string) => new TextEncoder().encode(text);

describe("jsonDepthExceeds (limit 3)", () => {
  const cases: [string, string, boolean][] = [
    ["flat object", '{"a":1}', false],
    ["three deep", '{"a":[{"b":1}]}', false],
    ["four deep", '{"a":[{"b":[1]}]}', true],
    ["siblings do not add up", "[[[1]],[[2]],[[3]]]", false],
    ["brackets inside a string do not count", '{"a":"[[[[[[{{{{"}', false],
    ["an escaped quote does not end the string", '{"a":"x\\"[[[[[["}', false],
    ["an escaped backslash before the closing quote ends it", '{"a":"x\\\\"}', false],
    ["nesting after a string with escapes still counts", '{"a":"\\\\","b":[[[1]]]}', true],
    ["multi-byte UTF-8 in strings", '{"é":"日本語[[[[["}', false],
    ["unterminated string: left to JSON.parse", '{"a":"[[[[[', false],
    ["500,000 deep stops at the limit", "[".repeat(500_000), true],
  ];
  for (const [name, text, expected] of cases) test(name, () => expect(jsonDepthExceeds(bytes(text), 3)).toBe(expected));
});
