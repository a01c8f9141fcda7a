// One reservation in the memory budget (memory-budget.ts): the bytes it holds, who holds
// them, and, for a message being received (a reader), its growing: at once when the
// budget allows it, else a wait (the caller stops reading meanwhile) that ends when older
// messages give memory back, or in eviction (the message is deferred).
import type { GrowVerdict } from "./memory-shares.ts";

/** What a reservation asks of its budget. */
export interface Holder {
  /** Holds `delta` more (or less); growing only if allowed (or forced). */
  change(r: Reservation, delta: number, force: boolean): boolean;
  drop(r: Reservation): void;
  verdict(r: Reservation, delta: number): GrowVerdict;
  /** Newer readers waiting give way to `r`, the oldest growing in its pool: whether it may now grow. */
  makeRoom(r: Reservation, delta: number): boolean;
}

/** Why a reader lost its reservation: it sent nothing, waited too long, or gave way to older ones. */
export type EvictReason = "idle" | "max_wait" | "stalled" | "gave_way";

export class Reservation {
  private released = false;
  /** A reader waiting for room: the bytes it asked for (0: not waiting). */
  waitingBytes = 0;
  waitingFor: "pool" | "client" | null = null;
  waitingSinceMs = 0;
  grantedAtMs = Number.NEGATIVE_INFINITY;
  /** When its client last sent bytes (a reader). */
  activeAtMs = performance.now();
  evictedBy: EvictReason | null = null;
  private resolveWait: ((granted: boolean) => void) | null = null;
  private evicted: ((reason: EvictReason) => void) | null = null;

  constructor(
    private readonly budget: Holder,
    /** Bytes held against the budget now. */
    public bytes: number,
    readonly who: { stranger: boolean; clientKey: string | null },
    /** Its place in the order messages came in (older first). */
    readonly seq: number,
    /** A message being received: it grows with its bytes, may wait, may be evicted. */
    public reading: boolean,
  ) {}

  /**
   * Holds `bytes` instead (a message larger or smaller than reserved). Shrinking always
   * works; growing only if the budget has room (false otherwise, the reservation unchanged).
   */
  resize(bytes: number): boolean {
    if (this.released) return false;
    if (!this.budget.change(this, bytes - this.bytes, false)) return false;
    this.bytes = bytes;
    return true;
  }

  /** Holds `bytes` whatever the budget says (a received message's small fixed part, once read). */
  force(bytes: number): void {
    if (this.released) return;
    this.budget.change(this, bytes - this.bytes, true);
    this.bytes = bytes;
  }

  /**
   * A reader grows to `bytes`: true at once, or a wait that ends true (granted) or false
   * (evicted: it holds nothing any more). False at once when it was released or evicted.
   */
  grow(bytes: number): boolean | Promise<boolean> {
    if (this.released || this.evictedBy) return false;
    const delta = bytes - this.bytes;
    const verdict = delta <= 0 ? "grow" : this.budget.verdict(this, delta);
    if (verdict === "grow" || (verdict === "wait-pool" && this.budget.makeRoom(this, delta))) {
      this.budget.change(this, delta, true);
      this.bytes = bytes;
      this.grantedAtMs = performance.now();
      return true;
    }
    this.waitingBytes = bytes;
    this.waitingFor = verdict === "wait-client" ? "client" : "pool";
    this.waitingSinceMs = performance.now();
    return new Promise((resolve) => (this.resolveWait = resolve));
  }

  /** @internal The budget grants the wait. */
  grant(): void {
    const bytes = this.waitingBytes;
    this.budget.change(this, bytes - this.bytes, true);
    this.bytes = bytes;
    this.endWait(true);
    this.grantedAtMs = this.activeAtMs = performance.now();
  }

  /** Its client sent bytes (not idle). */
  touch(): void {
    this.activeAtMs = performance.now();
  }

  /** What to do when the reader loses its reservation (drop what it read, drain the rest). */
  onEvict(handler: (reason: EvictReason) => void): void {
    this.evicted = handler;
  }

  /** @internal The reader loses its reservation: it holds nothing and reads no more into memory. */
  evict(reason: EvictReason): void {
    if (this.released || this.evictedBy) return;
    this.evictedBy = reason;
    this.reading = false;
    this.endWait(false);
    this.evicted?.(reason);
    this.force(0);
  }

  /** The message is in: it no longer grows, waits or is evicted. */
  doneReading(): void {
    this.reading = false;
  }

  get waiting(): boolean {
    return this.waitingBytes > 0;
  }

  private endWait(granted: boolean): void {
    this.waitingBytes = 0;
    this.waitingFor = null;
    const resolve = this.resolveWait;
    this.resolveWait = null;
    resolve?.(granted);
  }

  /** Gives the bytes back; again is nothing. */
  release(): void {
    if (this.released) return;
    this.reading = false;
    this.endWait(false);
    this.budget.drop(this);
    this.released = true;
    this.bytes = 0;
  }

  get active(): boolean {
    return !this.released;
  }
}
