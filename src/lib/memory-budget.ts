// The memory budget for mail in flight (limits.mail_in_flight, issue 15): every message
// being received or sent (inbound SMTP, submission, E11) reserves what it will cost in
// memory before its bytes are read, grows the reservation if it turns out larger, and
// gives it back when it is done, on every path. A message that does not fit is deferred
// (451 4.3.1 in SMTP, 503 with Retry-After from the API) instead of Postroom growing.
// Outbound delivery holds each message's copy in it too, and waits when it has no room.
// Postfix does the same with its queue file (it never holds a message whole); we hold
// messages in memory while we work on them, so we count what we hold.

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

export class Reservation {
  private released = false;

  constructor(
    private readonly budget: MemoryBudget,
    /** Bytes held against the budget now. */
    public bytes: number,
  ) {}

  /**
   * Holds `bytes` instead (a message larger or smaller than reserved). Shrinking always
   * works; growing only if the budget has room (false otherwise, the reservation unchanged).
   */
  resize(bytes: number): boolean {
    if (this.released) return false;
    if (!this.budget.change(bytes - this.bytes)) return false;
    this.bytes = bytes;
    return true;
  }

  /** Gives the bytes back; again is nothing. */
  release(): void {
    if (this.released) return;
    this.released = true;
    this.budget.drop(this.bytes);
    this.bytes = 0;
  }

  get active(): boolean {
    return !this.released;
  }
}

export class MemoryBudget {
  private used = 0;
  private holders = 0;

  /** `capacity()` is read at each reservation, so a reload applies at once. */
  constructor(
    private readonly capacity: () => number,
    private readonly hooks: BudgetHooks = {},
  ) {}

  /** Bytes reserved by mail in flight now. */
  get inFlightBytes(): number {
    return this.used;
  }

  get capacityBytes(): number {
    return this.capacity();
  }

  /**
   * Whether `bytes` more would fit now. A message larger than the whole budget fits when
   * nothing else is in flight, so no setting can make a message impossible to accept.
   */
  fits(bytes: number): boolean {
    return this.used + bytes <= this.capacity() || this.holders === 0;
  }

  /**
   * A reservation of `bytes`, or null when it does not fit: counted as a refusal for
   * `listener`, or for none (null: outbound delivery, which waits rather than refuses).
   */
  reserve(bytes: number, listener: BudgetListener | null): Reservation | null {
    if (!this.fits(bytes)) {
      if (listener) this.hooks.refused?.(listener);
      return null;
    }
    this.used += bytes;
    this.holders++;
    return new Reservation(this, bytes);
  }

  /** Counts a deferral decided elsewhere (a message that could not grow its reservation). */
  refused(listener: BudgetListener): void {
    this.hooks.refused?.(listener);
  }

  /** @internal A reservation growing (or shrinking) by `delta` bytes. */
  change(delta: number): boolean {
    // Growing: within the budget, or alone in it (as `fits` allows for a first reservation).
    if (delta > 0 && this.used + delta > this.capacity() && this.holders > 1) return false;
    this.used += delta;
    return true;
  }

  /** @internal A reservation of `bytes` given back. */
  drop(bytes: number): void {
    this.used -= bytes;
    this.holders--;
  }
}

/** Retry-After of an HTTP 503 for lack of memory: about how long a large send takes to be queued. */
export const MEMORY_RETRY_AFTER_S = 5;
