// Idempotent sends (docs/sending.md): the same E11 request sent again with its
// Idempotency-Key, or a submitted message sent again with its Message-ID, is not queued
// twice. Pure decisions; the rows are in idempotency.repo.ts.

/** The longest Idempotency-Key taken (422 beyond). */
export const MAX_IDEMPOTENCY_KEY_CHARS = 256;

/** Where a key comes from: E11's Idempotency-Key header, or a submitted message's Message-ID. */
export type IdempotencyScope = "api" | "smtp";

export interface StoredKey {
  /** Hex SHA-256 of the E11 request body that got the answer; null for SMTP. */
  requestSha256: string | null;
  /** The first request's answer; null while it is in flight. */
  answer: string | null;
  createdAtMs: number;
}

/** Which key of which outbound account. */
export interface KeyRef {
  outboundAccountId: string;
  scope: IdempotencyScope;
  key: string;
}

/** What to store as the answer of a claimed key, with the message it queued. */
export interface KeyAnswer extends KeyRef {
  requestSha256: string | null;
  answer: string;
}

/**
 * A claim without an answer this old belongs to a request that is gone: a send is answered
 * in seconds (the message is queued, not delivered). On one node the claims of a process that
 * died are dropped when it starts again; on several nodes sharing PostgreSQL the node that
 * made a claim may never come back, so the claim is free again after this time.
 */
export const ABANDONED_CLAIM_MS = 10 * 60_000;

/** What a request with a key finds: nothing (it claims the key), one still in flight, or an answer. */
export type KeyFinding = { kind: "claim" } | { kind: "in_flight" } | { kind: "answered"; requestSha256: string | null; answer: string };

/** `keepMs`: how long a key is remembered (retention.idempotency_keys); null: for ever. */
export function findKey(row: StoredKey | null, nowMs: number, keepMs: number | null): KeyFinding {
  if (!row || (keepMs !== null && row.createdAtMs <= nowMs - keepMs)) return { kind: "claim" };
  if (row.answer === null) return row.createdAtMs <= nowMs - ABANDONED_CLAIM_MS ? { kind: "claim" } : { kind: "in_flight" };
  return { kind: "answered", requestSha256: row.requestSha256, answer: row.answer };
}

/**
 * The key of an E11 request (`Idempotency-Key`, or its alias `X-Idempotency-Key`), null
 * when it has none, or why it cannot be used (a 422).
 */
export function idempotencyKeyOf(header: (name: string) => string | null): { key: string } | { problem: string } | null {
  const main = header("idempotency-key");
  const alias = header("x-idempotency-key");
  if (main !== null && alias !== null && main !== alias)
    return { problem: "Idempotency-Key and X-Idempotency-Key differ: give one of them" };
  const key = main ?? alias;
  if (key === null) return null;
  const name = main !== null ? "Idempotency-Key" : "X-Idempotency-Key";
  if (key.trim() === "") return { problem: `${name}: must not be empty` };
  if (key.length > MAX_IDEMPOTENCY_KEY_CHARS) return { problem: `${name}: at most ${MAX_IDEMPOTENCY_KEY_CHARS} characters` };
  return { key };
}
