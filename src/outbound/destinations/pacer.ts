// A destination's `rate`, spread evenly: each transaction to it (per source IP) takes the next
// slot, one interval (window / limit) after the last, so "600/min" sends one every 100 ms
// rather than 600 at once and none for a minute. Slots are booked ahead by the connections
// delivering to it; a connection whose next slot is further off than MAX_PACE_WAIT_MS gives
// its recipients back instead of holding a session idle that long.
import type { RateLimit } from "../../config/units.ts";

/** The longest a connection waits for its next slot; past it, its recipients wait in the queue. */
export const MAX_PACE_WAIT_MS = 5000;
/** Keys remembered at most; past it, those whose slots are all in the past are forgotten. */
const MAX_KEYS = 10_000;

export class Pacer {
  /** Each key's next free slot (ms, on the caller's clock). */
  private readonly next = new Map<string, number>();

  /**
   * Books the next slot of `key` at `nowMs`: the ms to wait for it (0: at once), or null
   * (nothing booked) when it is more than `maxWaitMs` off. No rate: always 0.
   */
  book(key: string, rate: RateLimit | null, nowMs: number, maxWaitMs = MAX_PACE_WAIT_MS): number | null {
    if (!rate) return 0;
    const slot = Math.max(nowMs, this.next.get(key) ?? 0);
    if (slot - nowMs > maxWaitMs) return null;
    if (this.next.size >= MAX_KEYS) this.forget(nowMs);
    this.next.set(key, slot + rate.windowMs / rate.limit);
    return slot - nowMs;
  }

  /** How far ahead `key`'s next free slot is (0: free now). */
  backlogMs(key: string, nowMs: number): number {
    return Math.max(0, (this.next.get(key) ?? 0) - nowMs);
  }

  private forget(nowMs: number): void {
    for (const [key, at] of this.next) if (at <= nowMs) this.next.delete(key);
  }
}
