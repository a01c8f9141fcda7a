// Idempotency keys: what a request finds (table), the E11 headers it is read from (table),
// and the start-up clean-up on a real store.
import { describe, expect, test } from "bun:test";
import { ABANDONED_CLAIM_MS, findKey, idempotencyKeyOf, type KeyFinding, type StoredKey } from "../../src/outbound/sending/idempotency.ts";
import { createIdempotencyRepo, idempotencyAtStart, recordAnswer } from "../../src/outbound/sending/idempotency.repo.ts";
import { runSync } from "../../src/store/db/script.ts";
import type { KeyRef } from "../../src/outbound/sending/idempotency.ts";
import { openStore } from "../../src/store/store.ts";
import { tempDirsPerTest } from "../helpers/tmp.ts";

const DAY = 86_400_000;
const NOW = Date.parse("2026-11-24T12:00:00Z");

describe("findKey", () => {
  const answered: StoredKey = { requestSha256: "ab", answer: "{}", createdAtMs: NOW - 1000 };
  const cases: [name: string, row: StoredKey | null, keepMs: number | null, found: KeyFinding][] = [
    ["no row: claim it", null, DAY, { kind: "claim" }],
    ["answered: the answer", answered, DAY, { kind: "answered", requestSha256: "ab", answer: "{}" }],
    ["no answer yet: in flight", { ...answered, answer: null }, DAY, { kind: "in_flight" }],
    [
      "no answer for a millisecond less than the abandoned time: in flight",
      { ...answered, answer: null, createdAtMs: NOW - ABANDONED_CLAIM_MS + 1 },
      DAY,
      { kind: "in_flight" },
    ],
    [
      "no answer for the abandoned time (its node died): claim it",
      { ...answered, answer: null, createdAtMs: NOW - ABANDONED_CLAIM_MS },
      DAY,
      { kind: "claim" },
    ],
    ["answered a day ago to the millisecond: forgotten, claim it", { ...answered, createdAtMs: NOW - DAY }, DAY, { kind: "claim" }],
    [
      "answered a millisecond less than a day ago: the answer",
      { ...answered, createdAtMs: NOW - DAY + 1 },
      DAY,
      { kind: "answered", requestSha256: "ab", answer: "{}" },
    ],
    [
      "kept for ever (off): the answer, however old",
      { ...answered, createdAtMs: NOW - 400 * DAY },
      null,
      { kind: "answered", requestSha256: "ab", answer: "{}" },
    ],
    [
      "SMTP (no body hash): the answer",
      { requestSha256: null, answer: "uuid", createdAtMs: NOW },
      DAY,
      { kind: "answered", requestSha256: null, answer: "uuid" },
    ],
  ];
  for (const [name, row, keepMs, found] of cases) test(name, () => expect(findKey(row, NOW, keepMs)).toEqual(found));
});

describe("idempotencyKeyOf", () => {
  const cases: [name: string, headers: Record<string, string>, result: ReturnType<typeof idempotencyKeyOf>][] = [
    ["none", {}, null],
    ["Idempotency-Key", { "idempotency-key": "order-1" }, { key: "order-1" }],
    ["the alias", { "x-idempotency-key": "order-1" }, { key: "order-1" }],
    ["both, equal", { "idempotency-key": "k", "x-idempotency-key": "k" }, { key: "k" }],
    [
      "both, different",
      { "idempotency-key": "a", "x-idempotency-key": "b" },
      { problem: "Idempotency-Key and X-Idempotency-Key differ: give one of them" },
    ],
    ["256 characters", { "idempotency-key": "k".repeat(256) }, { key: "k".repeat(256) }],
    ["257 characters", { "idempotency-key": "k".repeat(257) }, { problem: "Idempotency-Key: at most 256 characters" }],
    ["the alias, too long", { "x-idempotency-key": "k".repeat(257) }, { problem: "X-Idempotency-Key: at most 256 characters" }],
    ["empty", { "idempotency-key": "" }, { problem: "Idempotency-Key: must not be empty" }],
  ];
  for (const [name, headers, result] of cases) test(name, () => expect(idempotencyKeyOf((n) => headers[n] ?? null)).toEqual(result));
});

// The repository's cases on both engines: idempotency-repo.contract.test.ts.
describe("at start-up (SQLite, one process per data dir)", () => {
  const newDir = tempDirsPerTest();
  const ref: KeyRef = { outboundAccountId: "o1", scope: "api", key: "k" };

  test("claims without an answer are dropped before the repository is handed out (their requests are gone); answers stay", async () => {
    const dir = newDir();
    const before = openStore(dir);
    const keys = createIdempotencyRepo(before.log);
    await keys.claim(ref, NOW, DAY);
    await keys.claim({ ...ref, key: "answered" }, NOW, DAY);
    runSync(before.db, recordAnswer({ ...ref, key: "answered", requestSha256: "ab", answer: "{}" }, NOW));
    before.close();
    const after = openStore(dir);
    const again = await idempotencyAtStart(after.log);
    expect(await again.claim(ref, NOW, DAY)).toEqual({ kind: "claim" });
    expect((await again.claim({ ...ref, key: "answered" }, NOW, DAY)).kind).toBe("answered");
    after.close();
  });
});
