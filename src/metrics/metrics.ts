// Prometheus metrics (GET /metrics, Bearer http.metrics_token). One registry per App, so
// tests that run several appliances in one process do not share counters; the process and
// runtime metrics are the process's own (process.ts) and are added to every scrape.
// Gauges that describe stored state (the queue, the webhook backlog) are read from the
// store when scraped, with indexed queries, so they are right after a restart; counters
// count events of this process. Names are in base units (seconds, bytes), counters end in
// _total, and every label has a small fixed set of values (labels.ts). docs/operations.md
// lists them all (a test keeps it in step).
import { Counter, Gauge, Histogram, Registry } from "prom-client";
import type { TargetOutcome } from "../inbound/targets/target-reply.ts";
import type { Clock } from "../lib/clock.ts";
import type { OutboundRepo } from "../outbound/queue/queue.port.ts";
import type { RecipientUpdate } from "../outbound/queue/message.ts";
import type { OutboxRepo } from "../events/outbox.repo.ts";
import type { BudgetListener } from "../lib/memory-budget.ts";
import type { TlsStatus } from "../tls/manager.ts";
import {
  DELIVERY_RESULTS,
  deliveryResult,
  INBOUND_OUTCOMES,
  inboundOutcome,
  methodLabel,
  postResult,
  SMTP_REFUSAL_REASONS,
  statusClass,
  targetPostResult,
  type SmtpRefusalReason,
} from "./labels.ts";
import { processRegistry } from "./process.ts";

export interface MetricsDeps {
  /** The outgoing queue: recipients due now and later, and when the first due is (or was) due. */
  queue: Pick<OutboundRepo, "queueDepth" | "nextDueMs">;
  /** The webhook backlog: events waiting for their receiver, and when the oldest was created. */
  outbox: Pick<OutboxRepo, "countPending" | "oldestPendingMs">;
  clock: Clock;
  tls(): TlsStatus;
  /** Bytes the memory budget holds for mail in flight now, and the budget (src/lib/memory-budget.ts). */
  mailInFlight(): { bytes: number; budget: number; waiting: number };
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
  targetPost(outcome: TargetOutcome, seconds: number): void;
  /** A delivery attempt's outcome, committed; `acceptedAtMs` is when the message was accepted (the 202). */
  delivery(update: Pick<RecipientUpdate, "status">, acceptedAtMs: number): void;
  /** A delivery attempt's outcome dropped: the worker's lease on the recipient had ended (attempt-recorder.ts). */
  deliveryLeaseLost(): void;
  /** One POST of a batch of events to a webhook: the status answered, or none and whether it timed out. */
  webhookPost(status: number | null, timedOut: boolean): void;
  /** `route` is the route's pattern (labels.ts routeMatcher), never the path. */
  httpRequest(method: string, route: string, status: number, seconds: number): void;
  /** This node started a run of a periodic job. */
  jobRun(job: string): void;
}

const MINUTE_S = 60;
const HOUR_S = 3600;
const DAY_S = 86_400;

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

  // Inbound: messages, refusals, target POSTs.
  const inboundMessages = new Counter({
    name: "postroom_inbound_messages_total",
    help: "Messages received over inbound SMTP, by the reply at the end of DATA: accepted (2xx), deferred (4xx, the sender retries), rejected (5xx)",
    labelNames: ["outcome"] as const,
    registers,
  });
  for (const outcome of INBOUND_OUTCOMES) inboundMessages.inc({ outcome }, 0);
  const smtpRefusals = new Counter({
    name: "postroom_inbound_smtp_refusals_total",
    help: "Recipients, messages and sessions the inbound SMTP listener refused, by reason",
    labelNames: ["reason"] as const,
    registers,
  });
  for (const reason of SMTP_REFUSAL_REASONS) smtpRefusals.inc({ reason }, 0);
  const targetPosts = new Counter({
    name: "postroom_target_posts_total",
    help: "POSTs of received messages to their targets, by the class of the target's answer (2xx, 4xx, 5xx...), timeout or unreachable",
    labelNames: ["status_class"] as const,
    registers,
  });
  for (const status_class of ["2xx", "4xx", "5xx", "timeout", "unreachable"]) targetPosts.inc({ status_class }, 0);
  const statusWritesFailed = new Counter({
    name: "postroom_inbound_status_writes_failed_total",
    help: "Incoming statuses whose write failed after their target answered; the sender kept its reply and they are written again later",
    registers,
  });
  const statusesLost = new Counter({
    name: "postroom_inbound_statuses_lost_total",
    help: "Incoming statuses given up after their writes kept failing (or with inbound.status_retry_rows full); each is logged at error",
    registers,
  });
  const targetPostSeconds = new Histogram({
    name: "postroom_target_post_duration_seconds",
    help: "Time from the start of a POST to a target until its answer was read (or it failed), redirects included",
    buckets: [0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, MINUTE_S],
    registers,
  });

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
    help: "Recipients of sent messages waiting for a delivery attempt, by state: due (now) or scheduled (a retry or digest later)",
    labelNames: ["state"] as const,
    registers,
    async collect() {
      const depth = await deps.queue.queueDepth(nowMs());
      this.set({ state: "due" }, depth.due);
      this.set({ state: "scheduled" }, depth.scheduled);
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

  // HTTP.
  const httpRequests = new Counter({
    name: "postroom_http_requests_total",
    help: "HTTP requests answered, by method, route pattern and status class",
    labelNames: ["method", "route", "status_class"] as const,
    registers,
  });
  const httpSeconds = new Histogram({
    name: "postroom_http_request_duration_seconds",
    help: "Time from a request's arrival to its answer (headers), by method and route pattern",
    labelNames: ["method", "route"] as const,
    buckets: [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10],
    registers,
  });

  // TLS and memory.
  new Gauge({
    name: "postroom_tls_certificate_expiry_timestamp_seconds",
    help: "When the certificate in use expires, in seconds since the epoch, labelled with its names and issuer (absent when there is none)",
    labelNames: ["names", "issuer"],
    registers,
    collect() {
      this.reset();
      const cert = deps.tls().certificate;
      if (cert) this.set({ names: cert.names.join(","), issuer: cert.issuer }, Math.floor(cert.notAfterMs / 1000));
    },
  });
  new Gauge({
    name: "postroom_mail_in_flight_bytes",
    help: "Memory reserved by mail in flight (received, submitted or sent through the API and not yet posted, queued or refused), as limits.mail_in_flight counts it",
    registers,
    collect() {
      this.set(deps.mailInFlight().bytes);
    },
  });
  new Gauge({
    name: "postroom_mail_in_flight_budget_bytes",
    help: "limits.mail_in_flight: the memory mail in flight may hold at once",
    registers,
    collect() {
      this.set(deps.mailInFlight().budget);
    },
  });
  new Gauge({
    name: "postroom_mail_waiting_for_memory",
    help: "Messages being received that wait, unread, for room in limits.mail_in_flight (older messages first)",
    registers,
    collect() {
      this.set(deps.mailInFlight().waiting);
    },
  });
  const mailRefusedMemory = new Counter({
    name: "postroom_mail_refused_memory_total",
    help: "Messages deferred (SMTP 451 4.3.1, API 503) because limits.mail_in_flight had no room for them, by listener",
    labelNames: ["listener"] as const,
    registers,
  });
  for (const listener of ["inbound", "submission", "api"]) mailRefusedMemory.inc({ listener }, 0);
  // Per node: a job that runs once per cluster counts on the node that held its lease. The
  // label is `task`: Prometheus gives every series its scrape job as `job` already.
  const jobRuns = new Counter({
    name: "postroom_job_runs_total",
    help: "Runs of periodic jobs this node started, by task (jobs that run once per cluster count on the node holding their lease)",
    labelNames: ["task"] as const,
    registers,
  });

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
    webhookPost: (status, timedOut) => webhookPosts.inc({ result: postResult(status, timedOut) }),
    httpRequest(method, route, status, seconds) {
      const m = methodLabel(method);
      httpRequests.inc({ method: m, route, status_class: statusClass(status) });
      httpSeconds.observe({ method: m, route }, seconds);
    },
    jobRun: (job) => jobRuns.inc({ task: job }),
  };
}
