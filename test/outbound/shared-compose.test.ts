// A batch's messages of one content share its composition (shared-compose.ts): each must be
// the message a composition of its own gives, byte for byte but for the MIME boundaries
// (random in every composition), with its own To, Cc and Message-ID.
import { describe, expect, test } from "bun:test";
import { composeMessage } from "../../src/outbound/compose/compose.ts";
import { draftFromBody, type MessageBody } from "../../src/outbound/compose/message-input.ts";
import { SharedComposer } from "../../src/outbound/compose/shared-compose.ts";

const RULES = { maxRecipients: 50, blockedExtensions: [], markdownAllowed: true, forcedTestMode: false };
const DATE = new Date("2026-11-27T21:00:00Z");
const sameBoundaries = (raw: Buffer) => raw.toString("latin1").replace(/_NmP-[0-9a-f]+-Part_\d+/g, "BOUNDARY");
const content: Omit<MessageBody, "to"> = {
  from: '"Anna Müller" <news@sender.test>',
  subject: "Ihre Bestellung ✓ — Übersicht",
  plain: "Grüße aus Köln!\n".repeat(20),
  html: "<p>Grüße aus Köln!</p>".repeat(20),
  headers: { "X-Campaign": "nov", "Reply-To": "replies@sender.test" },
};

describe("SharedComposer", () => {
  test.each([
    ["a plain address", "bob@example.org", undefined],
    ["a UTF-8 display name and a Cc", '"Józef Żółć" <jozef@example.org>', ["c1@example.org", '"Ćwik" <c2@example.org>']],
    ["many recipients (folded To)", Array.from({ length: 12 }, (_, i) => `"Reader Number ${i}" <reader-${i}@example.org>`), undefined],
  ])("the second message of a content is its own composition: %s", async (_name, to, cc) => {
    const composer = new SharedComposer();
    const firstDraft = draftFromBody({ ...content, to: "first@example.org", cc: cc ? ["someone@example.org"] : undefined }, RULES);
    await composer.compose(firstDraft, "<first@mx.test>", DATE);
    const draft = draftFromBody({ ...content, to, cc }, RULES);
    const shared = await composer.compose(draft, "<second@mx.test>", DATE);
    const own = await composeMessage(draft, "<second@mx.test>", DATE);
    expect(sameBoundaries(shared.raw)).toBe(sameBoundaries(own.raw));
    expect(shared.messageId).toBe("<second@mx.test>");
    expect(shared.raw.toString("latin1")).not.toContain("first@example.org");
  });

  test("another content, attachments or raw are composed on their own", async () => {
    const composer = new SharedComposer();
    await composer.compose(draftFromBody({ ...content, to: "a@example.org" }, RULES), "<a@mx.test>", DATE);
    const other = draftFromBody({ ...content, subject: "Another", to: "b@example.org" }, RULES);
    expect(sameBoundaries((await composer.compose(other, "<b@mx.test>", DATE)).raw)).toBe(
      sameBoundaries((await composeMessage(other, "<b@mx.test>", DATE)).raw),
    );
    const attached = draftFromBody(
      { ...content, to: "c@example.org", attachments: [{ file_name: "a.txt", content: "YQ==", content_type: "text/plain" }] },
      RULES,
    );
    expect((await composer.compose(attached, "<c@mx.test>", DATE)).raw.toString()).toContain("a.txt");
  });

  test("messages composed at once share the first composition", async () => {
    const composer = new SharedComposer();
    const drafts = Array.from({ length: 5 }, (_, i) => draftFromBody({ ...content, to: `r${i}@example.org` }, RULES));
    const composed = await Promise.all(drafts.map((d, i) => composer.compose(d, `<m${i}@mx.test>`, DATE)));
    const boundaries = composed.map((c) => /_NmP-[0-9a-f]+-Part_\d+/.exec(c.raw.toString("latin1"))?.[0]);
    expect(new Set(boundaries).size).toBe(1);
    for (const [i, c] of composed.entries()) expect(c.raw.toString("latin1")).toContain(`To: r${i}@example.org\r\n`);
  });
});
