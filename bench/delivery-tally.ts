// Postroom's own record of what it sent, read from its log as the lines arrive: one
// "outbound attempt" line per recipient (at level "info"), written just before the group
// commit that records the outcome and its events (src/outbound/worker.ts settle; the
// commit follows within its 1 ms window, later when the event loop is busy). The sending benchmarks check it against what the sink received.
// Lines are matched as text, not parsed: there is one per message, and the parsing would
// cost the benchmark process CPU it shares with the server.
import type { Child } from "./child.ts";

/** Each list keeps at most this many lines: enough to report, bounded if everything fails. */
const KEPT_LINES = 1000;

export class DeliveryTally {
  /** "outbound attempt" lines with verdict "delivered". */
  delivered = 0;
  /** performance.now() of each "delivered" line, in order. */
  readonly deliveredAt: number[] = [];
  /** "outbound attempt" lines with any other verdict. */
  readonly other: string[] = [];
  readonly errors: string[] = [];
  /** Webhook lines above "info" (the dispatcher's warnings) that are not errors. */
  readonly webhookWarnings: string[] = [];

  /** Tallies every line `child` logs once it is ready; call before `child.ready()`. */
  constructor(child: Child) {
    child.onLine = (line) => this.add(line);
  }

  private add(line: string): void {
    if (line.includes('"outbound attempt"')) {
      if (line.includes('"verdict":"delivered"')) {
        this.delivered++;
        this.deliveredAt.push(performance.now());
      } else if (this.other.length < KEPT_LINES) this.other.push(line);
    } else if (line.includes('"level":"error"')) {
      if (this.errors.length < KEPT_LINES) this.errors.push(line);
    } else if (/"msg":"(webhook|events not posted)/.test(line) && !line.includes('"level":"info"') && !line.includes('"level":"debug"')) {
      if (this.webhookWarnings.length < KEPT_LINES) this.webhookWarnings.push(line);
    }
  }
}
