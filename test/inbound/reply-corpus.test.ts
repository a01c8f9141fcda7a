// reply_plain over text written by others: for the plain text of every message in
// test/corpus/ (as stored and as sent over SMTP; test/helpers/corpus-texts.ts), our reply
// parser gives the unpatched email-reply-parser 2.3.9's answer.
import { describe, expect, test } from "bun:test";
import { REPLY_PARSE_MAX_CHARS, replyText } from "../../src/inbound/payload/reply-text.ts";
import { corpusTexts } from "../helpers/corpus-texts.ts";
import { assertUnpatched, originalReplyText } from "../helpers/reply-original.ts";

/**
 * Corpus texts where we differ from the package on purpose, with the reason. None: the patch
 * we replace (patches/email-reply-parser@2.3.9.patch, removed) only made the package faster,
 * and gave the unpatched package's answers on all 1,342 texts.
 */
const DIFFERS_ON_PURPOSE: Record<string, string> = {};

describe("reply_plain over the corpus", async () => {
  const texts = await corpusTexts();

  test("the corpus gives texts to compare, and the package compared with is unpatched", () => {
    assertUnpatched();
    // About 700 messages, most with a text part, each as stored and as sent.
    expect(texts.length).toBeGreaterThan(1_300);
    // Enough of them have something cut off for the comparison to mean something.
    const cut = texts.filter(({ plain }) => plain.length <= REPLY_PARSE_MAX_CHARS && replyText(plain) !== plain.trim());
    expect(cut.length).toBeGreaterThan(300);
  });

  test("every text's reply is the package's, but the listed ones", () => {
    const differs: Record<string, { ours: string | undefined; original: string }> = {};
    for (const { key, plain } of texts) {
      if (plain.length > REPLY_PARSE_MAX_CHARS) {
        expect(replyText(plain)).toBeUndefined();
        continue;
      }
      const ours = replyText(plain);
      const original = originalReplyText(plain);
      if (ours !== original) differs[key] = { ours, original };
    }
    expect(Object.keys(differs).sort()).toEqual(Object.keys(DIFFERS_ON_PURPOSE).sort());
  });
});
