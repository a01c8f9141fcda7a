// The paused destinations as this node knows them: read from the store every second, so a
// pause set by any node (a throttle reply, an operator) holds here within a second, and
// written through at once when this node is throttled. The delivery worker asks it before
// it claims and before each transaction.
import type { Clock } from "../../lib/clock.ts";
import { FailureStreak } from "../../lib/failure-streak.ts";
import type { Logger } from "../../lib/logger.ts";
import type { DestinationRepo } from "./destinations.port.ts";
import { type DestinationPause, pauseHolds, throttlePause } from "./rules.ts";

/** How often the pauses are read from the store: a pause by another node holds here within this. */
export const PAUSE_POLL_MS = 1000;
/** Polls between two deletions of throttle pauses too old to double the next one. */
const POLLS_PER_CLEANUP = 60;

export class PauseBoard {
  private pauses = new Map<string, DestinationPause>();
  private timer: ReturnType<typeof setInterval> | null = null;
  private polls = 0;
  /** Polls that failed in a row (the store is away): logged once, not once a second. */
  private readonly pollFailures: FailureStreak;

  constructor(
    private readonly repo: Pick<DestinationRepo, "listPauses" | "getPause" | "putPause" | "removeStalePauses">,
    private readonly clock: Clock,
    private readonly logger: Logger,
    private readonly pollMs = PAUSE_POLL_MS,
  ) {
    this.pollFailures = new FailureStreak(logger, "warn", "reading destination pauses failed");
  }

  async start(): Promise<void> {
    await this.refresh();
    this.timer = setInterval(() => void this.refresh(), this.pollMs);
    this.timer.unref?.();
  }

  stop(): void {
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
  }

  /** Reads every pause from the store (the poll; tests call it too). */
  async refresh(): Promise<void> {
    try {
      if (++this.polls % POLLS_PER_CLEANUP === 0) await this.repo.removeStalePauses(this.clock.nowMs());
      this.pauses = new Map((await this.repo.listPauses()).map((p) => [p.destination, p]));
      this.pollFailures.succeeded();
    } catch (err) {
      // The last pauses read keep holding until the store answers again.
      this.pollFailures.failed(err);
    }
  }

  /** The pause holding `destination` at `nowMs`, or null. */
  pausedNow(destination: string, nowMs: number): DestinationPause | null {
    const p = this.pauses.get(destination);
    return p && pauseHolds(p, nowMs) ? p : null;
  }

  /** Every pause holding now (the admin view, /metrics). */
  holding(nowMs: number): DestinationPause[] {
    return [...this.pauses.values()].filter((p) => pauseHolds(p, nowMs));
  }

  /**
   * A throttle reply from `destination`: pauses it for its rule's `pause`, doubled while
   * throttles go on (rules.ts, throttlePause), here at once and on every node within a
   * second. Null when it was paused already.
   */
  async throttled(destination: string, reply: string, basePauseMs: number): Promise<DestinationPause | null> {
    const nowMs = this.clock.nowMs();
    // The store's row: another node may have paused (or doubled) it since the last poll.
    const prior = (await this.repo.getPause(destination).catch(() => null)) ?? this.pauses.get(destination) ?? null;
    const next = throttlePause(prior, basePauseMs, nowMs);
    if (!next) return null;
    const pause: DestinationPause = {
      destination,
      source: "throttle",
      reason: reply.slice(0, 500),
      pausedAtMs: nowMs,
      untilMs: next.untilMs,
      pauseMs: next.pauseMs,
    };
    this.pauses.set(destination, pause);
    await this.repo.putPause(pause).catch((err) => this.logger.error("recording a destination pause failed", { err, destination }));
    return pause;
  }
}

/** The destinations paused at `nowMs` and why, as the admin view's System page shows them. */
export async function pausedDestinations(repo: Pick<DestinationRepo, "listPauses">, nowMs: number) {
  return (await repo.listPauses())
    .filter((p) => pauseHolds(p, nowMs))
    .map((p) => ({
      destination: p.destination,
      source: p.source,
      reason: p.reason,
      paused_at: new Date(p.pausedAtMs).toISOString(),
      until: p.untilMs === null ? null : new Date(p.untilMs).toISOString(),
    }));
}
