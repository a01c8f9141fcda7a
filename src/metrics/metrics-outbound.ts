// The outbound metrics: delivery attempts by result and their latency, leases lost, the
// queue's depth and oldest due recipient, and the webhook POSTs and backlog. The gauges
// read the store when scraped. Registered by createMetrics (metrics.ts), which turns them
// into the Metrics methods; apart so each area's metrics read on their own.
import { Counter, Gauge, Histogram, type Registry } from "prom-client";
import type { OutboxRepo } from "../events/outbox.repo.ts";
import type { OutboundRepo } from "../outbound/queue/queue.port.ts";
import { DELIVERY_RESULTS } from "./labels.ts";

/** What the outbound gauges read when scraped (a part of MetricsDeps). */
export interface OutboundGauges {
  /** The outgoing queue: recipients due now and later, and when the first due is (or was) due. */
  queue: Pick<OutboundRepo, "queueDepth" | "nextDueMs">;
  /** The webhook backlog: events waiting for their receiver, and when the oldest was created. */
  outbox: Pick<OutboxRepo, "countPending" | "oldestPendingMs">;
}

const MINUTE_S = 60;
const HOUR_S = 3600;
const DAY_S = 86_400;

/**
 * Outbound and webhooks. `ageSeconds`: seconds since a time (0 for null, or for a time
 * still ahead).
 */
export function outboundMetrics(
  registers: Registry[],
  deps: OutboundGauges,
  nowMs: () => number,
  ageSeconds: (sinceMs: number | null) => number,
) {
  // Outbound: deliveries, their latency, the queue.
  const deliveries = new Counter({
    name: "postroom_outbound_deliveries_total",
    help: "Delivery attempts of sent messages by result: delivered, bounced, deferred (retried), expired (given up after outbound.max_queue_time), failed (the copy could not be made on our side)",
    labelNames: ["result"] as const,
    registers,
  });
  for (const result of DELIVERY_RESULTS) deliveries.inc({ result }, 0);
  const deliveryLeasesLost = new Counter({
    name: "postroom_outbound_delivery_leases_lost_total",
    help: "Delivery attempts whose outcome was dropped because the worker's lease on the recipient had ended (outbound.lease_time); the recipient is attempted again",
    registers,
  });
  const deliverySeconds = new Histogram({
    name: "postroom_outbound_delivery_duration_seconds",
    help: "Time from a message's acceptance (the API's 202 or the submission 250) to its delivery to a recipient's server, retries included",
    buckets: [0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, MINUTE_S, 5 * MINUTE_S, 15 * MINUTE_S, HOUR_S, 4 * HOUR_S, DAY_S, 5 * DAY_S],
    registers,
  });
  new Gauge({
    name: "postroom_outbound_recipients_queued",
    help: "Recipients of sent messages waiting for a delivery attempt, by state: due (now), scheduled (a retry or digest later) or held (by an operator, until released)",
    labelNames: ["state"] as const,
    registers,
    async collect() {
      const depth = await deps.queue.queueDepth(nowMs());
      this.set({ state: "due" }, depth.due);
      this.set({ state: "scheduled" }, depth.scheduled);
      this.set({ state: "held" }, depth.held);
    },
  });
  new Gauge({
    name: "postroom_outbound_oldest_due_age_seconds",
    help: "How long the longest-waiting due recipient has been due without being delivered (0 when none is due)",
    registers,
    async collect() {
      this.set(ageSeconds(await deps.queue.nextDueMs()));
    },
  });

  // Webhooks.
  const webhookPosts = new Counter({
    name: "postroom_webhook_posts_total",
    help: "POSTs of message events to webhooks, by the class of the receiver's answer (2xx acknowledges), timeout or unreachable",
    labelNames: ["result"] as const,
    registers,
  });
  for (const result of ["2xx", "4xx", "5xx", "timeout", "unreachable"]) webhookPosts.inc({ result }, 0);
  new Gauge({
    name: "postroom_webhook_events_pending",
    help: "Message events waiting to be acknowledged by a webhook receiver",
    registers,
    async collect() {
      this.set(await deps.outbox.countPending());
    },
  });
  new Gauge({
    name: "postroom_webhook_backlog_age_seconds",
    help: "Age of the oldest message event not yet acknowledged by its webhook receiver (0 when none waits)",
    registers,
    async collect() {
      this.set(ageSeconds(await deps.outbox.oldestPendingMs()));
    },
  });
  const webhookEventsExpired = new Counter({
    name: "postroom_webhook_events_expired_total",
    help: "Message events dropped because their receiver did not acknowledge them within webhooks.max_age",
    registers,
  });
  return { deliveries, deliveryLeasesLost, deliverySeconds, webhookPosts, webhookEventsExpired };
}
