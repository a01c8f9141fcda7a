// Failed SMTP AUTH attempts per client address (an IPv6 client by its /64). Past
// smtp.auth_failures_before_delay failures within smtp.auth_failure_window, each further
// attempt waits before its password is even checked (smtp.auth_failure_delay, doubled each
// time, up to smtp.auth_failure_max_delay): the wait comes before the check, so a client
// that hangs up early learns nothing sooner, and a right password waits as long as a wrong
// one. The failure that reaches smtp.auth_failures_before_close is answered 421 and closes
// the connection; from then on, until the window has passed, the address's AUTH attempts are
// refused with 421 without any password being checked. Other addresses are untouched.
// Kept in memory, for at most smtp.auth_failure_clients addresses (the least recently
// failing are forgotten first), so no number of addresses can grow it.
import type { AuthFailureLimits } from "../config/config.ts";
import { BoundedCache } from "../lib/bounded-cache.ts";
import { clientKey } from "./limits.ts";

/** What an AUTH attempt from an address gets before its password is checked. */
export interface AttemptVerdict {
  /** Failures of this address within the window, this attempt counted as one until it succeeds. */
  failures: number;
  /** How long to wait before the password is checked. */
  delayMs: number;
  /** Refused with 421 without a check: the address had reached auth_failures_before_close. */
  refuse: boolean;
  /** A wrong password closes the connection (421 rather than 535). */
  closeIfWrong: boolean;
}

interface Record {
  count: number;
  lastAtMs: number;
}

type VerdictLimits = Pick<AuthFailureLimits, "failuresBeforeDelay" | "delayMs" | "maxDelayMs" | "failuresBeforeClose">;

/** Pure: the failures still counted at `nowMs` (none once the window has passed since the last one). */
export function failuresAt(prior: Record | undefined, nowMs: number, windowMs: number): number {
  return !prior || nowMs - prior.lastAtMs >= windowMs ? 0 : prior.count;
}

/** Pure: what the next attempt of an address with `prior` failures gets. */
export function attemptVerdict(prior: number, l: VerdictLimits): AttemptVerdict {
  const failures = prior + 1;
  const past = failures - l.failuresBeforeDelay;
  // The exponent is capped so the product stays finite; the max delay caps it long before.
  const delayMs = past <= 0 ? 0 : Math.min(l.maxDelayMs, l.delayMs * 2 ** Math.min(past - 1, 30));
  return { failures, delayMs, refuse: prior >= l.failuresBeforeClose, closeIfWrong: failures >= l.failuresBeforeClose };
}

export class AuthFailures {
  private readonly seen: BoundedCache<string, Record>;

  constructor(private readonly limits: () => AuthFailureLimits) {
    this.seen = new BoundedCache(limits().trackedClients);
  }

  /**
   * An AUTH attempt from `address`, before its password is checked. It is counted as a
   * failure at once (a success takes it back): attempts sent side by side on many
   * connections count one after the other, so they cannot all pass before the first fails.
   */
  attempt(address: string, nowMs: number): AttemptVerdict {
    const l = this.limits();
    const key = clientKey(address);
    const verdict = attemptVerdict(failuresAt(this.seen.get(key), nowMs, l.windowMs), l);
    this.seen.set(key, { count: verdict.failures, lastAtMs: nowMs });
    return verdict;
  }

  /**
   * A successful AUTH: its attempt is not a failure after all. The earlier failures stay
   * counted: a client with a password of its own must not wipe out its guesses at others'.
   */
  succeeded(address: string): void {
    const key = clientKey(address);
    const record = this.seen.get(key);
    if (record) this.seen.set(key, { ...record, count: Math.max(0, record.count - 1) });
  }

  get trackedClients(): number {
    return this.seen.size;
  }
}
