// check-config's "did you mean": the schema key a misspelt one was meant to be, and none
// when the unknown key is no near miss.
import { describe, expect, test } from "bun:test";
import { editDistance, suggestKey } from "../../src/config/did-you-mean.ts";
import { ConfigSchema } from "../../src/config/schema.ts";

const keysOf = (schema: { properties: Record<string, unknown> }) => Object.keys(schema.properties);
const TOP = keysOf(ConfigSchema);
const INBOUND = keysOf(ConfigSchema.properties.inbound);
const TLS = keysOf(ConfigSchema.properties.tls);
const ACME = keysOf(ConfigSchema.properties.tls.properties.acme);
const SMTP = keysOf(ConfigSchema.properties.smtp);
const ACCOUNT = keysOf(ConfigSchema.properties.accounts.items);

describe("suggestKey", () => {
  const cases: [string, string, readonly string[], string | null][] = [
    ["a letter missing", "target_timout", INBOUND, "target_timeout"],
    ["a letter extra", "target_timeoutt", INBOUND, "target_timeout"],
    ["two letters swapped", "traget_timeout", INBOUND, "target_timeout"],
    ["a letter wrong", "allow_private_targats", INBOUND, "allow_private_targets"],
    ["dash for underscore", "target-timeout", INBOUND, "target_timeout"],
    ["capitals", "Target_Timeout", INBOUND, "target_timeout"],
    ["a singular for a plural", "api_token", ACCOUNT, "api_tokens"],
    ["a plural for a singular", "rate_limits", ACCOUNT, "rate_limit"],
    ["a section name", "outbund", TOP, "outbound"],
    ["a short key, one letter off", "mdoe", TLS, "mode"],
    ["acme's email", "emial", ACME, "email"],
    ["a listener", "inbound_listn", SMTP, "inbound_listen"],
    ["nothing close", "colour", INBOUND, null],
    ["a key of another section", "bounce_host", INBOUND, null],
    ["too short to guess", "ab", TLS, null],
    ["three edits away", "targt_tmeot", INBOUND, null],
    ["no known keys", "anything", [], null],
  ];
  test.each(cases)("%s: %s", (_name, unknown, known, expected) => {
    expect(suggestKey(unknown, known)).toBe(expected);
  });
});

describe("editDistance", () => {
  const cases: [string, string, number][] = [
    ["", "", 0],
    ["abc", "abc", 0],
    ["abc", "", 3],
    ["abc", "abd", 1],
    ["abc", "acb", 1],
    ["kitten", "sitting", 3],
  ];
  test.each(cases)("%s → %s: %d", (a, b, d) => {
    expect(editDistance(a, b)).toBe(d);
  });
});
