// Sliding-window rate limits per account (management) and per outbound account (sends,
// through the API and SMTP alike), docs/api.md, Rate limits. RateLimits is the port callers
// await; RateLimiter counts in this process's memory (one node: SQLite), and
// rate-limit.pg.repo.ts counts in PostgreSQL, so nodes sharing a database share each limit.
// The in-memory window is exact: it keeps the time of each of the last `limit` calls in a
// ring, so memory per key is bounded by the configured limit.
import type { Principal } from "./accounts.ts";
import type { RateLimit } from "../config/units.ts";

/** The limit that applies to a caller: management calls per account, sends per outbound account. */
export const rateOf = (p: Principal): RateLimit | null => (p.kind === "account" ? p.account.rateLimit : p.outbound.sendRateLimit);
export const principalKey = (p: Principal): string => (p.kind === "account" ? `account:${p.account.id}` : `outbound:${p.outbound.id}`);

export interface RateDecision {
  allowed: boolean;
  limit: number;
  remaining: number;
  /** Seconds until a slot frees up (RateLimit-Reset; Retry-After when refused). */
  resetSeconds: number;
}

/** Where calls are counted: in memory (RateLimiter) or in the database all nodes share. */
export interface RateLimits {
  /** Counts one call for `key` at `nowMs` if the limit allows it. */
  take(key: string, rate: RateLimit, nowMs: number): Promise<RateDecision>;
}

class Window {
  readonly times: number[];
  private next = 0;
  private count = 0;
  constructor(readonly limit: number) {
    this.times = new Array<number>(limit).fill(0);
  }
  /** Oldest call still counted, or null when fewer than `limit` calls were made. */
  oldest(): number | null {
    return this.count < this.limit ? null : this.times[this.next]!;
  }
  record(nowMs: number): void {
    this.times[this.next] = nowMs;
    this.next = (this.next + 1) % this.limit;
    if (this.count < this.limit) this.count++;
  }
  /** Calls after `sinceMs` and the earliest of them. Times are recorded in order, so binary search. */
  since(sinceMs: number): { used: number; earliestMs: number | null } {
    const start = this.count < this.limit ? 0 : this.next;
    const at = (i: number) => this.times[(start + i) % this.limit]!;
    let lo = 0;
    let hi = this.count;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if (at(mid) > sinceMs) hi = mid;
      else lo = mid + 1;
    }
    return { used: this.count - lo, earliestMs: lo < this.count ? at(lo) : null };
  }
}

export class RateLimiter implements RateLimits {
  private windows = new Map<string, { window: Window; windowMs: number }>();

  /**
   * `maxKeys` bounds the memory when keys come from outside (client IPs, sessions): past
   * it, the key that was created first is forgotten (its window starts afresh if it comes
   * back). Accounts from the config need no bound.
   */
  constructor(private readonly maxKeys = Number.POSITIVE_INFINITY) {}

  async take(key: string, rate: RateLimit, nowMs: number): Promise<RateDecision> {
    let entry = this.windows.get(key);
    // A new limit after SIGHUP starts a fresh window rather than guessing at the old counts.
    if (!entry || entry.window.limit !== rate.limit || entry.windowMs !== rate.windowMs) {
      entry = { window: new Window(rate.limit), windowMs: rate.windowMs };
      this.windows.delete(key);
      if (this.windows.size >= this.maxKeys) this.windows.delete(this.windows.keys().next().value!);
      this.windows.set(key, entry);
    }
    const { window } = entry;
    const since = nowMs - rate.windowMs;
    const oldest = window.oldest();
    if (oldest !== null && oldest > since) {
      return { allowed: false, limit: rate.limit, remaining: 0, resetSeconds: Math.max(1, Math.ceil((oldest - since) / 1000)) };
    }
    window.record(nowMs);
    const { used, earliestMs } = window.since(since);
    const earliest = earliestMs ?? nowMs;
    return {
      allowed: true,
      limit: rate.limit,
      remaining: rate.limit - used,
      resetSeconds: Math.max(1, Math.ceil((earliest - since) / 1000)),
    };
  }
}
