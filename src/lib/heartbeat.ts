// A lease holder's heartbeat: while its holder works, `beat` renews every lease it holds
// (one statement), a third of the lease time apart, so a lease outlives any one attempt
// however long it legitimately takes, yet a holder that dies (kill -9, power loss, cut off
// from the store) stops beating and its work moves once the lease time has passed since its
// last beat. One beat at a time; a beat that fails is logged and the next one tries again
// (the holder's leases end meanwhile unless a later beat renews them in time).
import type { Logger } from "./logger.ts";

/** Beats per lease time: two beats may be missed (a slow store, a busy event loop) before a lease ends. */
export const BEATS_PER_LEASE = 3;

export class Heartbeat {
  private timer: ReturnType<typeof setTimeout> | null = null;
  private beating: Promise<void> = Promise.resolve();
  private running = false;

  /** `leaseMs` is read at every beat, so a config reload takes effect at the next one. */
  constructor(
    private readonly beat: () => Promise<void>,
    private readonly leaseMs: () => number,
    private readonly logger: Logger,
    /** What the leases are of, for the log ("recipient", "webhook batch", "job"). */
    private readonly what: string,
  ) {}

  start(): void {
    if (this.running) return;
    this.running = true;
    this.schedule(this.intervalMs());
  }

  /** No more beats; one under way finishes (await quiet()). */
  stop(): void {
    this.running = false;
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
  }

  /** Resolves once the beat under way, if any, has finished (its renewals applied). */
  quiet(): Promise<void> {
    return this.beating;
  }

  private intervalMs(): number {
    return Math.max(1, Math.floor(this.leaseMs() / BEATS_PER_LEASE));
  }

  private schedule(delayMs: number): void {
    if (!this.running) return;
    this.timer = setTimeout(() => {
      this.timer = null;
      const startedMs = performance.now();
      this.beating = this.beat()
        .catch((err) => this.logger.warn(`${this.what} lease renewal failed; the next beat tries again`, { err }))
        .finally(() => this.schedule(Math.max(0, this.intervalMs() - (performance.now() - startedMs))));
    }, delayMs);
    this.timer.unref?.();
  }
}
