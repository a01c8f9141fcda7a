// The decisions of the memory budget (src/lib/memory-budget.ts, issue 31), as pure
// functions: who may hold how much of limits.mail_in_flight, and which message being
// received may grow now. Three scopes hold a message being received:
// - the whole budget (every listener, E11, deliveries);
// - the strangers' pool (unauthenticated inbound SMTP, port 25): the budget less the
//   share kept for authenticated submission, E11 and deliveries (mail_in_flight_reserved);
// - its client (an IPv4 address, an IPv6 /64): mail_in_flight_per_client.
// Within the pool and the client, older messages come first: a message that is the k-th
// oldest of those still growing leaves k/(k+1) of the scope free for the older ones (half
// for the second, up to seven eighths), so newer messages stop (and wait, unread) while
// there is little room, instead of every message growing at once until none can finish
// (issue 31: 24 senders of 18 MB, all deferred). The oldest may pass its client's share
// (one message larger than the share can always come in), and the pool's when the others
// hold little; newer ones that wait give way to it (memory-budget.ts).

/** A share of the budget: a percentage of it, or bytes. */
export type Share = { percent: number } | { bytes: number };

/** Eighths: how finely room is kept for older messages. */
export const RANK_STEPS = 8;

export function shareBytes(share: Share, capacityBytes: number): number {
  return "bytes" in share ? Math.min(share.bytes, capacityBytes) : Math.floor((capacityBytes * share.percent) / 100);
}

/** "25%" or a size ("64MB"), as the config writes a share; null when it is neither. */
export function parseShare(text: string, parseSize: (s: string) => number | null): Share | null {
  const percent = /^\s*(\d+(?:\.\d+)?)\s*%\s*$/.exec(text);
  if (percent) {
    const value = Number(percent[1]);
    return value <= 100 ? { percent: value } : null;
  }
  const bytes = parseSize(text);
  return bytes === null ? null : { bytes };
}

/**
 * Bytes a message that is the `rank`-th oldest still growing leaves free in a scope of
 * `capacityBytes`: half for the second, two thirds for the third... seven eighths at most.
 */
export function keptFreeFor(rank: number, capacityBytes: number): number {
  const k = Math.min(rank, RANK_STEPS - 1);
  return Math.floor((k * capacityBytes) / (k + 1));
}

/** One scope's state as seen by a message that wants `deltaBytes` more. */
export interface ScopeView {
  capacityBytes: number;
  /** Bytes held in the scope now, this message's included. */
  usedBytes: number;
  /** Bytes this message holds now. */
  ownBytes: number;
  /** Older messages of the scope still growing (or waiting to). */
  rank: number;
}

export type ScopeKind = "pool" | "client";

/** Whether the message may take `deltaBytes` more in this scope now. */
export function scopeAllows(kind: ScopeKind, s: ScopeView, deltaBytes: number): boolean {
  const after = s.usedBytes + deltaBytes;
  if (s.rank === 0) {
    // The oldest: up to the scope's capacity; past it, a client's oldest always (its share
    // never makes one message impossible), the pool's when the others hold little.
    if (after <= s.capacityBytes || kind === "client") return true;
    return s.usedBytes - s.ownBytes <= s.capacityBytes / RANK_STEPS;
  }
  return s.capacityBytes - after >= keptFreeFor(s.rank, s.capacityBytes);
}

export interface GrowRequest {
  deltaBytes: number;
  /** The whole budget: its capacity and what is held (this message's included). */
  capacityBytes: number;
  usedBytes: number;
  /** The pool it grows in (strangers', or the whole budget for the others). */
  pool: ScopeView;
  /** Its client's scope; null for authenticated clients (they are held to their account). */
  client: ScopeView | null;
}

export type GrowVerdict = "grow" | "wait-pool" | "wait-client";

/** Whether a message being received may grow now, or waits: for room in its pool, or in its client's share. */
export function growVerdict(r: GrowRequest): GrowVerdict {
  if (r.deltaBytes <= 0) return "grow";
  if (r.client && !scopeAllows("client", r.client, r.deltaBytes)) return "wait-client";
  // The whole budget: never past it, but for the oldest when the others hold little (one
  // message larger than the budget can still come in, while newer ones wait with a slice).
  const others = r.usedBytes - r.pool.ownBytes;
  if (r.usedBytes + r.deltaBytes > r.capacityBytes && !(r.pool.rank === 0 && others <= r.capacityBytes / RANK_STEPS)) return "wait-pool";
  return scopeAllows("pool", r.pool, r.deltaBytes) ? "grow" : "wait-pool";
}

/**
 * Whether `bytes` may be taken at once (a first slice at DATA, SIZE= at MAIL FROM, an E11
 * message, a delivery): within the whole budget and, for strangers, within their pool, or
 * past it when the others there hold at most an eighth of it (so one message larger than
 * the budget can still come in beside first slices). No waiting and no ranks: what does
 * not fit now is deferred.
 */
export function takeFits(
  bytes: number,
  whole: { capacityBytes: number; usedBytes: number },
  pool: { capacityBytes: number; usedBytes: number } | null,
): boolean {
  const fits = (s: { capacityBytes: number; usedBytes: number }) =>
    s.usedBytes + bytes <= s.capacityBytes || s.usedBytes <= s.capacityBytes / RANK_STEPS;
  return fits(whole) && (pool === null || fits(pool));
}
