// The memory budget for mail in flight (limits.mail_in_flight, issue 15): every message
// being received or sent (inbound SMTP, submission, E11) reserves what it will cost in
// memory before its bytes are read, grows the reservation as they arrive, and gives it
// back when it is done, on every path. A message that does not fit is deferred (451 4.3.1
// in SMTP, 503 with Retry-After from the API) instead of Postroom growing. Outbound
// delivery holds each message's copy in it too, and waits when it has no room.
// Postfix does the same with its queue file (it never holds a message whole); we hold
// messages in memory while we work on them, so we count what we hold.
//
// Issue 31: the budget cannot be held hostage. A message being received (a "reader")
// holds what has arrived, not what SIZE= declared; strangers (port 25) share a pool that
// leaves mail_in_flight_reserved to submission, E11 and deliveries, one client at most
// mail_in_flight_per_client of it; a reader that cannot grow waits, unread, oldest first
// (memory-shares.ts decides); one that sends nothing for mail_in_flight_idle_time, or
// waits past mail_in_flight_max_wait, loses its reservation (the message is deferred);
// and when nothing moves, the newest waiter gives way to the older ones.
import { growVerdict, shareBytes, takeFits, type GrowVerdict, type ScopeView, type Share } from "./memory-shares.ts";
import { Reservation, type Holder } from "./memory-reservation.ts";

export { Reservation } from "./memory-reservation.ts";
export type BudgetListener = "inbound" | "submission" | "api";

/**
 * What a message of `bytes` holds at its peak while Postroom works on it, measured with
 * bench:memory (bench/RESULTS.md, issue 15): the raw bytes, the parsed content, what the
 * parser leaves for the garbage collector, the body being posted or stored, as a multiple
 * of its size, plus a fixed part for everything small.
 */
export interface MessageCost {
  copies: number;
  fixedBytes: number;
}

export const costOf = (cost: MessageCost, bytes: number): number => Math.ceil(cost.copies * bytes) + cost.fixedBytes;

export interface BudgetHooks {
  /** A message was deferred because it did not fit. */
  refused?(listener: BudgetListener): void;
}

/** The shares and timers of the budget (limits.mail_in_flight_*), read at each decision. */
export interface BudgetPolicy {
  perClient: Share;
  reserved: Share;
  idleMs: number;
  maxWaitMs: number;
}

/** Who holds a reservation: strangers (unauthenticated inbound) by client; the others not. */
export interface Who {
  stranger: boolean;
  clientKey: string | null;
}

export const DEFAULT_POLICY: BudgetPolicy = { perClient: { percent: 25 }, reserved: { percent: 25 }, idleMs: 10_000, maxWaitMs: 120_000 };
/** A reader that was granted room this recently is still growing (older ones keep room for it). */
const GROWING_MS = 2000;
/** Waiters and nothing moving for this long: the newest waiter gives way. */
const STALL_MS = 1000;
const TICK_MS = 250;
const NONE: ReadonlySet<Reservation> = new Set();

export class MemoryBudget {
  private used = 0;
  private readonly holders = new Set<Reservation>();
  private seq = 0;
  /** Since when nothing that will give memory back has moved (null: something moves). */
  private stalledSinceMs: number | null = null;
  /** Waiters are being looked at (an eviction meanwhile does not start it again). */
  private pumping = false;
  private timer: ReturnType<typeof setInterval> | null = null;

  /** `capacity()` and `policy()` are read at each decision, so a reload applies at once. */
  constructor(
    private readonly capacity: () => number,
    private readonly hooks: BudgetHooks = {},
    private readonly policy: () => BudgetPolicy = () => DEFAULT_POLICY,
  ) {}

  /** Bytes reserved by mail in flight now. */
  get inFlightBytes(): number {
    return this.used;
  }

  get capacityBytes(): number {
    return this.capacity();
  }

  /** Messages being received that wait for room (their streams paused, or a DATA before its 354). */
  get waitingCount(): number {
    let n = 0;
    for (const r of this.holders) if (r.waitingBytes > 0) n++;
    return n;
  }

  /** Bytes strangers (unauthenticated inbound SMTP) may hold together. */
  strangerPoolBytes(): number {
    const cap = this.capacity();
    return cap - shareBytes(this.policy().reserved, cap);
  }

  /**
   * Whether `bytes` more would fit now for `who` (by default: not a stranger). A message
   * larger than the budget fits when the others hold at most an eighth of it, so no
   * setting can make a message impossible to accept.
   */
  fits(bytes: number, who: Who = { stranger: false, clientKey: null }): boolean {
    const whole = { capacityBytes: this.capacity(), usedBytes: this.used };
    if (!who.stranger) return takeFits(bytes, whole, null);
    let usedBytes = 0;
    for (const h of this.holders) if (h.who.stranger) usedBytes += h.bytes;
    return takeFits(bytes, whole, { capacityBytes: this.strangerPoolBytes(), usedBytes });
  }

  /**
   * A reservation of `bytes`, or null when it does not fit: counted as a refusal for
   * `listener`, or for none (null: outbound delivery, which waits rather than refuses).
   * `reading`: a message being received, which grows with its bytes (Reservation.grow).
   */
  reserve(
    bytes: number,
    listener: BudgetListener | null,
    who: Who = { stranger: listener === "inbound", clientKey: null },
    reading = false,
  ): Reservation | null {
    if (!this.fits(bytes, who)) {
      if (listener) this.hooks.refused?.(listener);
      return null;
    }
    const r = new Reservation(this.holderApi(), bytes, who, ++this.seq, reading);
    this.used += bytes;
    this.holders.add(r);
    if (reading) this.startTimer();
    return r;
  }

  /** Counts a deferral decided elsewhere (a message that could not grow its reservation). */
  refused(listener: BudgetListener): void {
    this.hooks.refused?.(listener);
  }

  private holderApi(): Holder {
    return {
      change: (r, delta, force) => this.change(r, delta, force),
      drop: (r) => this.drop(r),
      verdict: (r, delta) => this.verdict(r, delta),
      makeRoom: (r, delta) => this.makeRoom(r, delta),
    };
  }

  private change(r: Reservation, delta: number, force: boolean): boolean {
    if (delta > 0 && !force && !(r.reading ? this.verdict(r, delta) === "grow" : this.fitsBeside(r, delta))) return false;
    this.used += delta;
    if (delta < 0) this.pump();
    return true;
  }

  /** A reservation that is not a reader grows as a new one would fit, itself aside (alone, it always may). */
  private fitsBeside(r: Reservation, delta: number): boolean {
    // As if it were new: what the others hold, plus its own bytes and the delta.
    const whole = { capacityBytes: this.capacity(), usedBytes: this.used - r.bytes };
    let usedBytes = 0;
    for (const h of this.holders) if (h.who.stranger && h !== r) usedBytes += h.bytes;
    return takeFits(r.bytes + delta, whole, r.who.stranger ? { capacityBytes: this.strangerPoolBytes(), usedBytes } : null);
  }

  private drop(r: Reservation): void {
    this.used -= r.bytes;
    this.holders.delete(r);
    this.pump();
  }

  /**
   * The oldest message still growing in its pool, held up there by readers only (nothing
   * else will give memory back): the newer ones that wait (paused with what they had
   * read) give way, newest first, so it can finish rather than every message waiting on
   * the others. False when there is something to wait for, or that is not enough.
   */
  private makeRoom(r: Reservation, delta: number): boolean {
    const stranger = r.who.stranger;
    if (r.bytes === 0 || this.poolScope(r).rank > 0) return false;
    // A message being worked on, E11 or a delivery gives its memory back soon: wait for it.
    for (const h of this.holders) if (!h.reading && h.bytes > 0) return false;
    const newer = [...this.holders]
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
  private pump(): void {
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
    for (const r of this.holders) {
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
      stranger ? this.strangerPoolBytes() : this.capacity(),
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
    for (const h of this.holders) {
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
  private verdict(r: Reservation, delta: number, without: ReadonlySet<Reservation> = NONE): GrowVerdict {
    const cap = this.capacity();
    const first = r.bytes === 0;
    const pool = this.poolScope(r, without, first);
    // In its client, every older message comes first (the oldest alone may pass the share).
    const key = r.who.clientKey;
    const client =
      r.who.stranger && key !== null
        ? this.scope(
            r,
            (h) => h.who.clientKey === key && !without.has(h),
            shareBytes(this.policy().perClient, cap),
            () => !first,
          )
        : null;
    let usedBytes = this.used;
    for (const h of without) usedBytes -= h.bytes;
    return growVerdict({ deltaBytes: delta, capacityBytes: cap, usedBytes, pool, client });
  }

  private startTimer(): void {
    if (this.timer) return;
    this.timer = setInterval(() => this.tick(), TICK_MS);
    this.timer.unref?.();
  }

  /** Readers that send nothing, wait too long, or hold up older ones when nothing moves, lose their reservation. */
  private tick(): void {
    const now = performance.now();
    const { idleMs, maxWaitMs } = this.policy();
    let readers = 0;
    let newestWaiter: Reservation | null = null;
    let waiters = 0;
    // What moves will give memory back: a message being worked on (not a reader), E11, a
    // delivery, or a reader whose client is sending (an evicted one holds nothing).
    let moving = 0;
    for (const r of [...this.holders]) {
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

/** Retry-After of an HTTP 503 for lack of memory: about how long a large send takes to be queued. */
export const MEMORY_RETRY_AFTER_S = 5;
