// Failed SMTP AUTH attempts per client address (an IPv6 client by its /64): past
// smtp.auth_failures_before_delay within smtp.auth_failure_window, each further 535 comes
// after a growing delay (smtp.auth_failure_delay, doubled each time, up to
// smtp.auth_failure_max_delay); at smtp.auth_failures_before_close the connection is closed
// with 421. Guessing passwords then costs the guesser time, and a client that goes on is
// shut out, while other addresses are untouched. Kept in memory, for at most
// smtp.auth_failure_clients addresses (the least recently failing are forgotten first), so
// no number of addresses can grow it.
import { BoundedCache } from "./bounded-cache.ts";
import { clientKey } from "./smtp-limits.ts";

export interface AuthFailureLimits {
  failuresBeforeDelay: number;
  delayMs: number;
  maxDelayMs: number;
  failuresBeforeClose: number;
  windowMs: number;
  trackedClients: number;
}

export interface AuthFailureVerdict {
  /** Failures of this address within the window, this one included. */
  failures: number;
  /** How long to wait before answering. */
  delayMs: number;
  /** Answer 421 and close instead of 535. */
  close: boolean;
}

interface Record {
  count: number;
  lastAtMs: number;
}

/** Pure: the count once this failure is added (failures older than the window are forgotten). */
export function failuresNow(prior: Record | undefined, nowMs: number, windowMs: number): number {
  if (!prior || nowMs - prior.lastAtMs >= windowMs) return 1;
  return prior.count + 1;
}

/** Pure: what the `failures`-th failure in a row from one address gets. */
export function authFailureVerdict(failures: number, l: Pick<AuthFailureLimits, "failuresBeforeDelay" | "delayMs" | "maxDelayMs" | "failuresBeforeClose">): AuthFailureVerdict {
  const past = failures - l.failuresBeforeDelay;
  // 2^30 is past any delay a config can give; the exponent is capped so the product stays finite.
  const delayMs = past <= 0 ? 0 : Math.min(l.maxDelayMs, l.delayMs * 2 ** Math.min(past - 1, 30));
  return { failures, delayMs, close: failures >= l.failuresBeforeClose };
}

export class AuthFailures {
  private readonly seen: BoundedCache<string, Record>;

  constructor(private readonly limits: () => AuthFailureLimits) {
    this.seen = new BoundedCache(limits().trackedClients);
  }

  /** A failed AUTH from `address`: counted, and what to do about it. */
  failed(address: string, nowMs: number): AuthFailureVerdict {
    const l = this.limits();
    const key = clientKey(address);
    const count = failuresNow(this.seen.get(key), nowMs, l.windowMs);
    this.seen.set(key, { count, lastAtMs: nowMs });
    return authFailureVerdict(count, l);
  }

  /** A successful AUTH: the address's count starts again. */
  succeeded(address: string): void {
    this.seen.delete(clientKey(address));
  }

  get trackedClients(): number {
    return this.seen.size;
  }
}
