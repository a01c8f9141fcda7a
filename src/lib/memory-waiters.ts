// The waiting side of the memory budget (memory-budget.ts): which message being received
// may grow now and which waits, oldest first, in its pool and in its client's share
// (memory-shares.ts decides); newer waiters giving way to the oldest; and the timer that
// evicts readers that send nothing, wait too long, or hold up older ones when nothing
// moves. Apart from the budget's accounting (what is reserved, what fits a new message),
// which it reads through BudgetView.
import { type GrowVerdict, type ScopeView, type Share, growVerdict, shareBytes } from "./memory-shares.ts";
import type { Reservation } from "./memory-reservation.ts";

/** What the waiters read of their budget, at each decision. */
export interface BudgetView {
  readonly holders: ReadonlySet<Reservation>;
  usedBytes(): number;
  capacity(): number;
  policy(): { perClient: Share; idleMs: number; maxWaitMs: number };
  /** Bytes strangers (unauthenticated inbound SMTP) may hold together. */
  strangerPoolBytes(): number;
}

/** A reader that was granted room this recently is still growing (older ones keep room for it). */
const GROWING_MS = 2000;
/** Waiters and nothing moving for this long: the newest waiter gives way. */
const STALL_MS = 1000;
const TICK_MS = 250;
const NONE: ReadonlySet<Reservation> = new Set();

export class BudgetWaiters {
  /** Since when nothing that will give memory back has moved (null: something moves). */
  private stalledSinceMs: number | null = null;
  /** Waiters are being looked at (an eviction meanwhile does not start it again). */
  private pumping = false;
  private timer: ReturnType<typeof setInterval> | null = null;

  constructor(private readonly budget: BudgetView) {}

  /**
   * The oldest message still growing in its pool, held up there by readers only (nothing
   * else will give memory back): the newer ones that wait (paused with what they had
   * read) give way, newest first, so it can finish rather than every message waiting on
   * the others. False when there is something to wait for, or that is not enough.
   */
  makeRoom(r: Reservation, delta: number): boolean {
    const stranger = r.who.stranger;
    if (r.bytes === 0 || this.poolScope(r).rank > 0) return false;
    // A message being worked on, E11 or a delivery gives its memory back soon: wait for it.
    for (const h of this.budget.holders) if (!h.reading && h.bytes > 0) return false;
    const newer = [...this.budget.holders]
      .filter((h) => h.seq > r.seq && h.reading && h.waitingBytes > 0 && h.who.stranger === stranger)
      .reverse();
    // None gives way when all of them together would not be enough.
    if (newer.length === 0 || this.verdict(r, delta, new Set(newer)) !== "grow") return false;
    const pumping = this.pumping;
    this.pumping = true;
    try {
      for (const h of newer) {
        h.evict("gave_way");
        if (this.verdict(r, delta) === "grow") return true;
      }
    } finally {
      this.pumping = pumping;
    }
    return false;
  }

  /** Memory was given back: waiters are looked at again, oldest first. */
  pump(): void {
    if (this.pumping) return;
    this.pumping = true;
    try {
      this.pumpWaiters();
    } finally {
      this.pumping = false;
    }
  }

  private pumpWaiters(): void {
    // The oldest waiting for room in a pool is served first (the newer ones of that pool
    // wait behind it); a waiter held back by its client's share holds up only its client.
    const blocked = new Set<boolean>();
    for (const r of this.budget.holders) {
      if (!r.waitingBytes || blocked.has(r.who.stranger)) continue;
      const delta = r.waitingBytes - r.bytes;
      let verdict = this.verdict(r, delta);
      if (verdict === "wait-pool" && this.makeRoom(r, delta)) verdict = "grow";
      if (verdict === "grow") r.grant();
      else r.waitingFor = verdict === "wait-client" ? "client" : "pool";
      if (verdict === "wait-pool") blocked.add(r.who.stranger);
    }
  }

  /**
   * Its pool: older messages come first there while they still grow (were granted room
   * lately, or wait for it), not the ones that stopped (a slow sender does not keep room).
   */
  private poolScope(r: Reservation, without: ReadonlySet<Reservation> = NONE, unranked = false): ScopeView {
    const now = performance.now();
    const stranger = r.who.stranger;
    return this.scope(
      r,
      (h) => h.who.stranger === stranger && !without.has(h),
      stranger ? this.budget.strangerPoolBytes() : this.budget.capacity(),
      (h) => !unranked && (h.waitingFor === "pool" || (h.waitingFor === null && now - h.grantedAtMs < GROWING_MS)),
    );
  }

  /** `ranks(h)`: whether an older reader `h` comes before `r` in the scope. */
  private scope(
    r: Reservation,
    inScope: (h: Reservation) => boolean,
    capacityBytes: number,
    ranks: (h: Reservation) => boolean,
  ): ScopeView {
    let usedBytes = 0;
    let rank = 0;
    for (const h of this.budget.holders) {
      if (!inScope(h)) continue;
      usedBytes += h.bytes;
      if (h !== r && h.seq < r.seq && h.reading && ranks(h)) rank++;
    }
    return { capacityBytes, usedBytes, ownBytes: r.bytes, rank };
  }

  /**
   * `without`: as if these held nothing (the readers that would give way). A reader that
   * holds nothing yet asks for its first slice (a DATA before its 354): it waits only for
   * room, not behind older messages, so small mail is never slowed by large mail growing.
   */
  verdict(r: Reservation, delta: number, without: ReadonlySet<Reservation> = NONE): GrowVerdict {
    const cap = this.budget.capacity();
    const first = r.bytes === 0;
    const pool = this.poolScope(r, without, first);
    // In its client, every older message comes first (the oldest alone may pass the share).
    const key = r.who.clientKey;
    const client =
      r.who.stranger && key !== null
        ? this.scope(
            r,
            (h) => h.who.clientKey === key && !without.has(h),
            shareBytes(this.budget.policy().perClient, cap),
            () => !first,
          )
        : null;
    let usedBytes = this.budget.usedBytes();
    for (const h of without) usedBytes -= h.bytes;
    return growVerdict({ deltaBytes: delta, capacityBytes: cap, usedBytes, pool, client });
  }

  startTimer(): void {
    if (this.timer) return;
    this.timer = setInterval(() => this.tick(), TICK_MS);
    this.timer.unref?.();
  }

  /** Readers that send nothing, wait too long, or hold up older ones when nothing moves, lose their reservation. */
  private tick(): void {
    const now = performance.now();
    const { idleMs, maxWaitMs } = this.budget.policy();
    let readers = 0;
    let newestWaiter: Reservation | null = null;
    let waiters = 0;
    // What moves will give memory back: a message being worked on (not a reader), E11, a
    // delivery, or a reader whose client is sending (an evicted one holds nothing).
    let moving = 0;
    for (const r of [...this.budget.holders]) {
      if (!r.reading) {
        if (r.bytes > 0) moving++;
        continue;
      }
      readers++;
      if (r.waitingBytes > 0) {
        if (now - r.waitingSinceMs > maxWaitMs) r.evict("max_wait");
        else (newestWaiter = r), waiters++;
      } else if (now - r.activeAtMs > idleMs) r.evict("idle");
      else if (now - r.activeAtMs < STALL_MS) moving++;
    }
    this.stalledSinceMs = moving > 0 || waiters === 0 ? null : (this.stalledSinceMs ?? now);
    // Readers waiting on each other and nothing else moving: the newest gives way to the older ones.
    if (waiters > 1 && newestWaiter && this.stalledSinceMs !== null && now - this.stalledSinceMs >= STALL_MS) {
      newestWaiter.evict("stalled");
      this.stalledSinceMs = now;
    } else this.pump();
    if (readers === 0 && this.timer) {
      clearInterval(this.timer);
      this.timer = null;
    }
  }
}
