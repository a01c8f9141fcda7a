// Delivered-to SMTP connections kept open for a short idle time, so the next recipients for
// the same destination go over the same session instead of paying for a new TCP connection,
// greeting, EHLO (and STARTTLS, AUTH) each time. Only a connection on which every
// transaction was accepted comes back here; one that is idle too long, too old, beyond the
// bound, or still here at shutdown is closed with QUIT.

/** How long an idle connection waits for the next message: Postfix's smtp_connection_cache_time_limit. */
export const CONNECTION_IDLE_MS = 2000;
/** How long one connection is reused in all, so load still spreads over a domain's MX hosts: Postfix's smtp_connection_reuse_time_limit. */
export const CONNECTION_REUSE_LIMIT_MS = 300_000;

/** What the cache needs of a connection (SmtpClient has it). */
export interface ReusableConnection {
  readonly usable: boolean;
  /** A transaction on it was refused or got no reply. */
  readonly sawError: boolean;
  /** When it was opened, on the cache's clock. */
  readonly openedAtMs: number;
  close(): void;
}

/** Pure: whether a connection may carry another message after this one. */
export function mayReuse(
  c: Pick<ReusableConnection, "usable" | "sawError" | "openedAtMs">,
  nowMs: number,
  reuseLimitMs = CONNECTION_REUSE_LIMIT_MS,
): boolean {
  return c.usable && !c.sawError && nowMs - c.openedAtMs < reuseLimitMs;
}

/**
 * Pure: the destination a connection serves: the smarthost when one relays everything, else
 * the domain's MX; and the TLS level it was opened under, so a connection opened without
 * certificate checks never carries mail that requires them.
 */
export function destinationKey(domain: string, smarthost: string | null, tlsLevel = "opportunistic"): string {
  return `${smarthost ? `relay ${smarthost}` : `mx ${domain.toLowerCase()}`} tls=${tlsLevel}`;
}

/**
 * Pure: the cache key of a lane's connection. Opportunistic connections serve every domain
 * of the lane (one provider's servers take mail for all its domains): an idle one is
 * reused, so the lane's sessions stay within its window. One opened under a domain's own
 * policy (MTA-STS, require_tls) serves that domain only. Every key starts with the lane, so
 * the lane's idle connections can be found. A pool's kept connection left from some
 * address: only mail that would leave from it (`sourceIps`, the pool's in order) may take it.
 */
export function laneConnectionKey(
  lane: string,
  domain: string,
  smarthost: string | null,
  tlsLevel: string,
  sourceIps: readonly string[] | null,
): string {
  const from = sourceIps ? ` from=${sourceIps.join(",")}` : "";
  return tlsLevel === "opportunistic" && !smarthost
    ? `${lane}| tls=opportunistic${from}`
    : `${lane}| ${destinationKey(domain, smarthost, tlsLevel)}${from}`;
}

interface Idle<C> {
  key: string;
  conn: C;
  timer: ReturnType<typeof setTimeout>;
}

export interface ConnectionCacheOptions {
  idleMs?: number;
  reuseLimitMs?: number;
  /** Idle connections kept at once over every destination; the longest idle is closed first. */
  maxIdle: () => number;
  nowMs?: () => number;
}

export class ConnectionCache<C extends ReusableConnection> {
  /** Oldest first. */
  private idle: Idle<C>[] = [];
  private closed = false;

  constructor(private readonly opts: ConnectionCacheOptions) {}

  get size(): number {
    return this.idle.length;
  }

  private now(): number {
    return this.opts.nowMs ? this.opts.nowMs() : performance.now();
  }

  /** The most recently parked usable connection for `key`, taken out of the cache, or null. */
  take(key: string): C | null {
    for (let i = this.idle.length - 1; i >= 0; i--) {
      const entry = this.idle[i]!;
      if (entry.key !== key) continue;
      this.idle.splice(i, 1);
      clearTimeout(entry.timer);
      // The server may have ended it while it waited (idle timeout, 421): skip that one.
      if (mayReuse(entry.conn, this.now(), this.opts.reuseLimitMs)) return entry.conn;
      entry.conn.close();
    }
    return null;
  }

  /**
   * Closes the longest idle connection whose key `matches` (another domain's, under another
   * TLS policy, of the same destination), if any: a destination's sessions stay within its
   * window when a chunk must open a new one. Whether one was closed.
   */
  closeOne(matches: (key: string) => boolean): boolean {
    const entry = this.idle.find((e) => matches(e.key));
    if (!entry) return false;
    this.drop(entry);
    return true;
  }

  /** Keeps the connection for the next message to `key` if it may be reused; closes it otherwise. */
  put(key: string, conn: C): void {
    if (this.closed || !mayReuse(conn, this.now(), this.opts.reuseLimitMs)) return conn.close();
    const timer = setTimeout(() => this.expire(conn), this.opts.idleMs ?? CONNECTION_IDLE_MS);
    timer.unref?.();
    this.idle.push({ key, conn, timer });
    while (this.idle.length > Math.max(0, this.opts.maxIdle())) this.drop(this.idle[0]!);
  }

  /** Closes every idle connection (QUIT) and keeps none from now on (shutdown). */
  closeAll(): void {
    this.closed = true;
    for (const entry of [...this.idle]) this.drop(entry);
  }

  private expire(conn: C): void {
    const entry = this.idle.find((e) => e.conn === conn);
    if (entry) this.drop(entry);
  }

  private drop(entry: Idle<C>): void {
    clearTimeout(entry.timer);
    this.idle = this.idle.filter((e) => e !== entry);
    entry.conn.close();
  }
}
