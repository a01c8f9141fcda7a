// The port through which idempotent sends (idempotency.ts) claim and release their keys,
// whatever the engine: idempotency.repo.ts implements it once for SQLite and PostgreSQL,
// and one contract test (test/outbound/idempotency-repo.contract.test.ts)
// runs the same cases on both. On PostgreSQL several nodes share the keys (issue 21): a
// claim must be atomic across them, so two requests with one key never both send.
import type { KeyFinding, KeyRef } from "./idempotency.ts";

/** Promise-returning on every engine: PostgreSQL answers over a socket, SQLite at once. */
export interface IdempotencyRepo {
  /**
   * The key's answer or its request still in flight; else the key is claimed for this
   * request (a claim older than `keepMs` is replaced), all at once: of two requests
   * claiming one key at the same time, one gets "claim", the other what the first left.
   */
  claim(ref: KeyRef, nowMs: number, keepMs: number | null): Promise<KeyFinding>;
  /** Gives up a claim that got no answer (the request failed), so the key can be used again. */
  release(ref: KeyRef): Promise<void>;
  /** Drops every claim without an answer: at start-up, the requests that made them are gone. */
  dropUnanswered(): Promise<number>;
}
