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
//
// The waiting (who grows, who waits, who is evicted) is in memory-waiters.ts; this file
// keeps the accounting: what is reserved, what fits, what is given back.
import { shareBytes, takeFits, type Share } from "./memory-shares.ts";
import { Reservation, type Holder } from "./memory-reservation.ts";
import { BudgetWaiters } from "./memory-waiters.ts";

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

export class MemoryBudget {
  private used = 0;
  private readonly holders = new Set<Reservation>();
  private seq = 0;
  /** Who waits, who grows, who is evicted: read what this holds at each decision. */
  private readonly waiters = new BudgetWaiters({
    holders: this.holders,
    usedBytes: () => this.used,
    capacity: () => this.capacity(),
    policy: () => this.policy(),
    strangerPoolBytes: () => this.strangerPoolBytes(),
  });

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
    if (reading) this.waiters.startTimer();
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
      verdict: (r, delta) => this.waiters.verdict(r, delta),
      makeRoom: (r, delta) => this.waiters.makeRoom(r, delta),
    };
  }

  private change(r: Reservation, delta: number, force: boolean): boolean {
    if (delta > 0 && !force && !(r.reading ? this.waiters.verdict(r, delta) === "grow" : this.fitsBeside(r, delta))) return false;
    this.used += delta;
    if (delta < 0) this.waiters.pump();
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
    this.waiters.pump();
  }
}

/** Retry-After of an HTTP 503 for lack of memory: about how long a large send takes to be queued. */
export const MEMORY_RETRY_AFTER_S = 5;

/** The limits.mail_in_flight* keys, as the config holds them (Config.limits). */
export interface MailInFlightLimits {
  mailInFlightBytes: number;
  mailInFlightPerClient: BudgetPolicy["perClient"];
  mailInFlightReserved: BudgetPolicy["reserved"];
  mailInFlightIdleMs: number;
  mailInFlightMaxWaitMs: number;
}

/** The budget `limits()` sets, read at each decision so a reload applies at once. */
export function budgetOfLimits(limits: () => MailInFlightLimits, hooks: BudgetHooks): MemoryBudget {
  return new MemoryBudget(
    () => limits().mailInFlightBytes,
    hooks,
    () => {
      const l = limits();
      return {
        perClient: l.mailInFlightPerClient,
        reserved: l.mailInFlightReserved,
        idleMs: l.mailInFlightIdleMs,
        maxWaitMs: l.mailInFlightMaxWaitMs,
      };
    },
  );
}
