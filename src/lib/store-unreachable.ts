// The store cannot be reached (PostgreSQL stopped, restarting, its connection cut): not a
// bug of ours, nothing was done, and the same call will work once it is back. The API
// answers 503 with Retry-After, as a server that is briefly unavailable does, instead of
// a 500 that says "a bug" (API.md section 3) and tells a client's retry logic nothing.

/** SQLSTATEs of a server that ends or refuses connections: class 08, and 57P01-57P03 (shutdown, crash, starting up). */
const UNAVAILABLE_STATES = /^(08...|57P0[123])$/;

/** Whether `err` says the store could not be reached, rather than that a statement failed. */
export function isStoreUnreachable(err: unknown): boolean {
  // The error itself or one it wraps (`cause`: "DKIM signing failed" around the key's read).
  for (let e = err, depth = 0; e && typeof e === "object" && depth < 5; e = (e as { cause?: unknown }).cause, depth++) {
    const { code, errno } = e as { code?: unknown; errno?: unknown };
    // Bun's client: ERR_POSTGRES_CONNECTION_REFUSED, _CLOSED, _TIMEOUT, _FAILED.
    if (typeof code === "string" && code.startsWith("ERR_POSTGRES_CONNECTION")) return true;
    if (typeof errno === "string" && UNAVAILABLE_STATES.test(errno)) return true;
  }
  return false;
}

/** What a client waits before it tries again, in seconds: about how long a PostgreSQL restart takes. */
export const STORE_RETRY_AFTER_S = 5;
