// The IdempotencyRepo contract, run on both engines: createIdempotencyRepo on SQLite and on
// PostgreSQL (a throwaway server with the postgres migrations). The same cases: a key is
// claimed, then in flight, then answered (the answer stored by recordAnswer, as the queue's
// transaction does); keys of other outbound
// accounts and scopes are other keys; a key past its keeping time is claimed afresh;
// release gives up claims only; dropUnanswered keeps answers. And what several nodes need
// (issue 21): of claims of one key made at the same time, exactly one gets "claim".
import { afterAll, beforeAll, beforeEach, describe, expect } from "bun:test";
import { ABANDONED_CLAIM_MS, type KeyAnswer, type KeyRef } from "../../src/outbound/sending/idempotency.ts";
import type { IdempotencyRepo } from "../../src/outbound/sending/idempotency.port.ts";
import { createIdempotencyRepo, recordAnswer } from "../../src/outbound/sending/idempotency.repo.ts";
import { runOn, runSync } from "../../src/store/db/script.ts";
import { type EngineHandle, STORE_ENGINES, type StoreEngine } from "../helpers/engines.ts";

interface Opened {
  repo: IdempotencyRepo;
  /** The answer stored as the queue stores it, in the engine's own way. */
  answer(a: KeyAnswer, nowMs: number): Promise<void>;
  handle: EngineHandle;
}

const open = async (engine: StoreEngine): Promise<Opened> => {
  const handle = await engine.open();
  if (handle.kind === "sqlite") {
    const store = handle.store;
    return { handle, repo: createIdempotencyRepo(handle.logDb), answer: async (a, nowMs) => runSync(store.db, recordAnswer(a, nowMs)) };
  }
  return { handle, repo: createIdempotencyRepo(handle.logDb), answer: (a, nowMs) => runOn(handle.db, recordAnswer(a, nowMs)) };
};

// Past 2^32 ms, so a 32-bit column or binding would show.
const NOW = 1_795_000_000_000;
const DAY = 86_400_000;
const ref: KeyRef = { outboundAccountId: "o1", scope: "api", key: "order-1" };

describe.each(STORE_ENGINES)("IdempotencyRepo on $name", (engine) => {
  const it = engine.test;
  let opened: Opened | undefined;
  const repo = (): IdempotencyRepo => opened!.repo;
  const answer = (a: KeyAnswer, nowMs: number) => opened!.answer(a, nowMs);

  beforeAll(async () => {
    if (engine.available()) opened = await open(engine);
  }, 60_000);
  beforeEach(async () => {
    await opened?.handle.clear(["idempotency_keys"]);
  });
  afterAll(async () => {
    await opened?.handle.close();
  });

  it("a new key is claimed, then in flight, then answered with the first request's answer and body hash", async () => {
    expect(await repo().claim(ref, NOW, DAY)).toStrictEqual({ kind: "claim" });
    expect(await repo().claim(ref, NOW + 1, DAY)).toStrictEqual({ kind: "in_flight" });
    await answer({ ...ref, requestSha256: "ab".repeat(32), answer: '{"id":"x"}' }, NOW + 5);
    expect(await repo().claim(ref, NOW + 10, DAY)).toStrictEqual({
      kind: "answered",
      requestSha256: "ab".repeat(32),
      answer: '{"id":"x"}',
    });
    // SMTP: no body hash, a NULL that reads back as null.
    const smtp: KeyRef = { outboundAccountId: "o1", scope: "smtp", key: "<a@b>" };
    expect(await repo().claim(smtp, NOW, DAY)).toStrictEqual({ kind: "claim" });
    await answer({ ...smtp, requestSha256: null, answer: "uuid-1" }, NOW);
    expect(await repo().claim(smtp, NOW, DAY)).toStrictEqual({ kind: "answered", requestSha256: null, answer: "uuid-1" });
  });

  it("the same key of another outbound account or scope, or a key differing in case or by a pattern, is another key", async () => {
    expect(await repo().claim(ref, NOW, DAY)).toStrictEqual({ kind: "claim" });
    await answer({ ...ref, requestSha256: "ab", answer: "{}" }, NOW);
    for (const other of [
      { ...ref, outboundAccountId: "o2" },
      { ...ref, scope: "smtp" as const },
      { ...ref, key: "ORDER-1" },
      { ...ref, key: "order-%" },
      { ...ref, key: "order-1 " },
    ]) {
      expect(await repo().claim(other, NOW, DAY)).toStrictEqual({ kind: "claim" });
    }
    expect((await repo().claim(ref, NOW, DAY)).kind).toBe("answered");
  });

  it("a key claimed keepMs ago or more is claimed afresh (the claim's time counts, not the answer's); kept for ever with keepMs null", async () => {
    await repo().claim(ref, NOW, DAY);
    await answer({ ...ref, requestSha256: "ab", answer: "{}" }, NOW + DAY - 10);
    expect((await repo().claim(ref, NOW + DAY - 1, DAY)).kind).toBe("answered");
    expect(await repo().claim(ref, NOW + DAY, DAY)).toStrictEqual({ kind: "claim" });
    // The fresh claim has no answer and its own time.
    expect(await repo().claim(ref, NOW + DAY + 1, DAY)).toStrictEqual({ kind: "in_flight" });
    expect(await repo().claim(ref, NOW + DAY + ABANDONED_CLAIM_MS - 1, DAY)).toStrictEqual({ kind: "in_flight" });
    // Unanswered for ABANDONED_CLAIM_MS: the request (and maybe its node) is gone; claimed afresh.
    expect(await repo().claim(ref, NOW + DAY + ABANDONED_CLAIM_MS, DAY)).toStrictEqual({ kind: "claim" });
    const forEver: KeyRef = { ...ref, key: "for-ever" };
    await repo().claim(forEver, NOW, null);
    await answer({ ...forEver, requestSha256: null, answer: "a" }, NOW);
    expect((await repo().claim(forEver, NOW + 400 * DAY, null)).kind).toBe("answered");
  });

  it("release gives up that claim only, never an answer; releasing an unknown key is no error", async () => {
    const other: KeyRef = { ...ref, key: "order-2" };
    await repo().claim(ref, NOW, DAY);
    await repo().claim(other, NOW, DAY);
    await repo().release(ref);
    await repo().release({ ...ref, key: "unknown" });
    expect(await repo().claim(ref, NOW, DAY)).toStrictEqual({ kind: "claim" });
    expect(await repo().claim(other, NOW, DAY)).toStrictEqual({ kind: "in_flight" });
    await answer({ ...ref, requestSha256: "ab", answer: "{}" }, NOW);
    await repo().release(ref);
    expect((await repo().claim(ref, NOW, DAY)).kind).toBe("answered");
  });

  it("dropUnanswered drops every claim without an answer, returns how many, and keeps the answers", async () => {
    await repo().claim(ref, NOW, DAY);
    await repo().claim({ ...ref, outboundAccountId: "o2" }, NOW, DAY);
    await repo().claim({ ...ref, key: "answered" }, NOW, DAY);
    await answer({ ...ref, key: "answered", requestSha256: "ab", answer: "{}" }, NOW);
    expect(await repo().dropUnanswered()).toBe(2);
    expect(await repo().dropUnanswered()).toBe(0);
    expect(await repo().claim(ref, NOW, DAY)).toStrictEqual({ kind: "claim" });
    expect(await repo().claim({ ...ref, outboundAccountId: "o2" }, NOW, DAY)).toStrictEqual({ kind: "claim" });
    expect((await repo().claim({ ...ref, key: "answered" }, NOW, DAY)).kind).toBe("answered");
  });

  it("claims of one key made at the same time: exactly one gets the claim, the others find it in flight (new keys and expired ones)", async () => {
    const CLAIMERS = 4;
    const claimAll = async (key: string, nowMs: number) =>
      (await Promise.all(Array.from({ length: CLAIMERS }, () => repo().claim({ ...ref, key }, nowMs, DAY))))
        .map((f) => f.kind as string)
        .sort();
    const oneClaim: string[] = ["claim", ...Array<string>(CLAIMERS - 1).fill("in_flight")];
    const keys = Array.from({ length: 10 }, (_, i) => `race-${i}`);
    // New keys, all raced at once.
    const fresh = await Promise.all(keys.map((k) => claimAll(k, NOW)));
    for (const kinds of fresh) expect(kinds).toStrictEqual(oneClaim);
    // Keys past their keeping time: the row is there, and replaced once.
    for (const k of keys) await answer({ ...ref, key: k, requestSha256: null, answer: "old" }, NOW);
    const expired = await Promise.all(keys.map((k) => claimAll(k, NOW + DAY)));
    for (const kinds of expired) expect(kinds).toStrictEqual(oneClaim);
  });
});
