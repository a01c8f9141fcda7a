// (beyond) Inbound mail waiting for its target (addresses with on_target_failure = "queue"),
// read from the store at each scrape: the same on every node of a cluster, as the outgoing
// queue's gauges are.
import { Gauge, type Registry } from "prom-client";

/** What the gauges read (the inbound queue's repository; structural, metrics sits below inbound). */
export interface InboundQueueGauges {
  inboundQueue?: { depth(): Promise<{ count: number; oldestCreatedAtMs: number | null }> };
}

export function inboundQueueMetrics(registers: Registry[], deps: InboundQueueGauges, ageSeconds: (sinceMs: number | null) => number): void {
  const queue = deps.inboundQueue;
  if (!queue) return;
  // One read serves both gauges of a scrape.
  let last: Promise<{ count: number; oldestCreatedAtMs: number | null }> | null = null;
  const read = () => (last ??= queue.depth().finally(() => setTimeout(() => (last = null), 0)));
  new Gauge({
    name: "postroom_inbound_queued_messages",
    help: 'Received messages kept because their target failed (on_target_failure = "queue"), waiting to be posted again',
    registers,
    async collect() {
      this.set((await read()).count);
    },
  });
  new Gauge({
    name: "postroom_inbound_queue_oldest_age_seconds",
    help: "How long the oldest kept message has waited for its target (0 when none waits)",
    registers,
    async collect() {
      this.set(ageSeconds((await read()).oldestCreatedAtMs));
    },
  });
}
