// Periodic jobs (DNS re-verification, attachment purge, certificate checks, ...): each on its own cron
// pattern, never two runs of one job at once, a failure logged and the next run still on.
import { Cron } from "croner";
import type { Logger } from "../lib/logger.ts";

export class Scheduler {
  private readonly jobs: Cron[] = [];
  private readonly timers: ReturnType<typeof setInterval>[] = [];

  constructor(private readonly logger: Logger) {}

  /** Runs `fn` on `pattern` (cron syntax with seconds, e.g. "0 * * * * *" every minute). */
  every(name: string, pattern: string, fn: () => Promise<unknown>): void {
    this.jobs.push(
      // Unnamed: croner keeps names in one registry per process, and tests run several appliances.
      new Cron(pattern, { protect: true, unref: true }, async () => {
        try {
          await fn();
        } catch (err) {
          this.logger.error("job failed", { job: name, err });
        }
      }),
    );
  }

  /** Runs `fn` every `intervalMs` (for intervals the config sets freely, such as tls.check_interval). */
  everyMs(name: string, intervalMs: number, fn: () => Promise<unknown>): void {
    let running = false;
    const timer = setInterval(async () => {
      if (running) return;
      running = true;
      try {
        await fn();
      } catch (err) {
        this.logger.error("job failed", { job: name, err });
      } finally {
        running = false;
      }
    }, intervalMs);
    timer.unref?.();
    this.timers.push(timer);
  }

  stop(): void {
    for (const job of this.jobs) job.stop();
    for (const timer of this.timers) clearInterval(timer);
    this.jobs.length = 0;
    this.timers.length = 0;
  }
}
