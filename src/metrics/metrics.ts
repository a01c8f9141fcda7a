// Prometheus metrics (GET /metrics, Bearer http.metrics_token). One registry per App, so
// tests that run several appliances in one process do not share counters; the process and
// runtime metrics are the process's own (process.ts) and are added to every scrape.
// Gauges that describe stored state (the queue, the webhook backlog) are read from the
// store when scraped, with indexed queries, so they are right after a restart; counters
// count events of this process. Names are in base units (seconds, bytes), counters end in
// _total, and every label has a small fixed set of values (labels.ts). docs/operations.md
// lists them all (a test keeps it in step).
// The metrics of each area are registered by metrics-inbound.ts, metrics-outbound.ts
// and metrics-node.ts, in this order (the order of a scrape); this file composes them.
import type { DestinationRepo } from "../outbound/destinations/destinations.port.ts";
import type { DestinationCounters } from "../outbound/delivery/worker-deps.ts";
import { destinationMetrics } from "./metrics-destinations.ts";
import { type Counter, Gauge, Registry } from "prom-client";
import type { Clock } from "../lib/clock.ts";
import type { BudgetListener } from "../lib/memory-budget.ts";
import type { RecipientUpdate } from "../outbound/queue/message.ts";
import {
  deliveryResult,
  type PostOutcome,
  inboundOutcome,
  methodLabel,
  postResult,
  statusClass,
  targetPostResult,
  type SmtpRefusalReason,
} from "./labels.ts";
import { type DeliverabilityGauges, deliverabilityMetrics } from "./metrics-deliverability.ts";
import { inboundMetrics } from "./metrics-inbound.ts";
import { type InboundQueueGauges, inboundQueueMetrics } from "./metrics-inbound-queue.ts";
import { type NodeGauges, nodeMetrics } from "./metrics-node.ts";
import { type OutboundGauges, outboundMetrics } from "./metrics-outbound.ts";
import { processRegistry } from "./process.ts";

/** What the gauges read when scraped: the queue and webhook backlog (OutboundGauges), TLS and memory (NodeGauges). */
export interface MetricsDeps extends OutboundGauges, NodeGauges, DeliverabilityGauges, InboundQueueGauges {
  clock: Clock;
  /** Paused destinations, read when scraped. */
  pauses: Pick<DestinationRepo, "listPauses">;
  version: string;
  /** This node's name (cluster.node_id, or the hostname). */
  nodeId: string;
}

export interface Metrics {
  registry: Registry;
  /** The Prometheus text of a scrape: this appliance's metrics and the process's. */
  scrape(): Promise<string>;
  readonly contentType: string;
  webhookEventsExpired: Counter;
  /** The memory budget refused a message: counted by listener, and as an inbound SMTP refusal. */
  memoryRefusal(listener: BudgetListener): void;
  /** An inbound message answered at the end of DATA with this reply code. */
  inboundMessage(replyCode: number): void;
  smtpRefusal(reason: SmtpRefusalReason): void;
  /** `count` incoming statuses whose write failed after their target answered ("failed"), or that were given up ("lost"): src/inbound/statuses/status-retry.ts. */
  statusWrites(outcome: "failed" | "lost", count: number): void;
  /** One POST of a received message to its target, and how long it took. */
  targetPost(outcome: PostOutcome, seconds: number): void;
  /** A delivery attempt's outcome, committed; `acceptedAtMs` is when the message was accepted (the 202). */
  delivery(update: Pick<RecipientUpdate, "status">, acceptedAtMs: number): void;
  /** A delivery attempt's outcome dropped: the worker's lease on the recipient had ended (attempt-recorder.ts). */
  deliveryLeaseLost(): void;
  /** Per destination and source IP: connections, deliveries, deferrals. */
  destinations: DestinationCounters;
  /** One POST of a batch of events to a webhook: the status answered, or none and whether it timed out. */
  webhookPost(status: number | null, timedOut: boolean): void;
  /** `route` is the route's pattern (labels.ts routeMatcher), never the path. */
  httpRequest(method: string, route: string, status: number, seconds: number): void;
  /** This node started a run of a periodic job. */
  jobRun(job: string): void;
}

export function createMetrics(deps: MetricsDeps): Metrics {
  const registry = new Registry();
  const registers = [registry];
  const processMetrics = processRegistry();
  const nowMs = () => deps.clock.nowMs();
  /** Seconds since `sinceMs` (0 for null, or for a time still ahead). */
  const ageSeconds = (sinceMs: number | null) => (sinceMs === null ? 0 : Math.max(0, (nowMs() - sinceMs) / 1000));

  new Gauge({
    name: "postroom_build_info",
    help: "Always 1; the versions of Postroom and of the Bun runtime serving, as labels",
    labelNames: ["version", "bun_version"],
    registers,
  }).set({ version: deps.version, bun_version: Bun.version }, 1);
  // One value per node (its config), so the label stays small; it tells apart the scrapes
  // of several nodes sharing a store, whatever address Prometheus reached them at.
  new Gauge({
    name: "postroom_node_info",
    help: "Always 1; this node's name (cluster.node_id, or the hostname) as the label node",
    labelNames: ["node"],
    registers,
  }).set({ node: deps.nodeId }, 1);

  const { inboundMessages, smtpRefusals, targetPosts, statusWritesFailed, statusesLost, targetPostSeconds } = inboundMetrics(registers);
  const { deliveries, deliveryLeasesLost, deliverySeconds, webhookPosts, webhookEventsExpired } = outboundMetrics(
    registers,
    deps,
    nowMs,
    ageSeconds,
  );
  const { httpRequests, httpSeconds, mailRefusedMemory, jobRuns } = nodeMetrics(registers, deps);
  deliverabilityMetrics(registers, deps);
  inboundQueueMetrics(registers, deps, ageSeconds);

  return {
    registry,
    contentType: registry.contentType,
    scrape: () => Registry.merge([registry, processMetrics]).metrics(),
    webhookEventsExpired,
    inboundMessage: (code) => inboundMessages.inc({ outcome: inboundOutcome(code) }),
    smtpRefusal: (reason) => smtpRefusals.inc({ reason }),
    memoryRefusal(listener) {
      mailRefusedMemory.inc({ listener });
      if (listener === "inbound") smtpRefusals.inc({ reason: "memory_budget" });
    },
    statusWrites: (outcome, count) => (outcome === "failed" ? statusWritesFailed : statusesLost).inc(count),
    targetPost(outcome, seconds) {
      targetPosts.inc({ status_class: targetPostResult(outcome) });
      targetPostSeconds.observe(seconds);
    },
    delivery(update, acceptedAtMs) {
      const result = deliveryResult(update);
      deliveries.inc({ result });
      if (result === "delivered") deliverySeconds.observe(ageSeconds(acceptedAtMs));
    },
    deliveryLeaseLost: () => deliveryLeasesLost.inc(),
    destinations: destinationMetrics(registers, deps.pauses, nowMs),
    webhookPost: (status, timedOut) => webhookPosts.inc({ result: postResult(status, timedOut) }),
    httpRequest(method, route, status, seconds) {
      const m = methodLabel(method);
      httpRequests.inc({ method: m, route, status_class: statusClass(status) });
      httpSeconds.observe({ method: m, route }, seconds);
    },
    jobRun: (job) => jobRuns.inc({ task: job }),
  };
}
