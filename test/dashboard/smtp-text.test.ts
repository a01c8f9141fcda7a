// The SMTP page's TLS line for each config: what is true, naming the keys that change it.
import { describe, expect, test } from "bun:test";
import { tlsText } from "../../src/dashboard/ui/smtp-text.ts";

describe("tlsText", () => {
  test.each([
    [true, false, /^offered: STARTTLS/],
    [true, true, /^offered: STARTTLS/],
    [false, true, /AUTH is taken without TLS because smtp\.allow_insecure_auth is on/],
    [false, false, /AUTH is refused; set tls\.mode .* smtp\.allow_insecure_auth = true/],
  ] as const)("certificate %p, allow_insecure_auth %p", (starttls, insecure, words) => {
    const text = tlsText(starttls, insecure);
    expect(text).toMatch(words);
    expect(text).not.toContain("`");
  });
});
