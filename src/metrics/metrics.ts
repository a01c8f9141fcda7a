// Prometheus metrics (GET /metrics, Bearer http.metrics_token). One registry per App, so
// tests that run several appliances in one process do not share counters. Gauges that
// describe stored state (queue depth, webhook backlog) are read from the store when
// scraped, so they are right after a restart; counters count events of this process.
import { Counter, Gauge, Registry } from "prom-client";
import type { Clock } from "../lib/clock.ts";
import type { TlsStatus } from "../tls/manager.ts";

export interface MetricsDeps {
  /** Recipients waiting for a delivery attempt (OutboundRepo.countQueued). */
  queuedRecipients(): Promise<number>;
  /** Events waiting for their webhook receiver (OutboxRepo.countPending). */
  pendingEvents(): Promise<number>;
  clock: Clock;
  tls(): TlsStatus;
  /** Bytes the memory budget holds for mail in flight now, and the budget (src/lib/memory-budget.ts). */
  mailInFlight(): { bytes: number; budget: number };
}

export interface Metrics {
  registry: Registry;
  webhookEventsExpired: Counter;
  /** Messages deferred because the memory budget had no room, by listener (inbound, submission, api). */
  mailRefusedMemory: Counter<"listener">;
}

const DAY_MS = 86_400_000;

export function createMetrics(deps: MetricsDeps): Metrics {
  const registry = new Registry();

  new Gauge({
    name: "postroom_tls_certificate_days_left",
    help: "Days until the certificate in use expires (absent when there is none)",
    labelNames: ["names", "issuer"],
    registers: [registry],
    collect() {
      this.reset();
      const cert = deps.tls().certificate;
      if (cert) this.set({ names: cert.names.join(","), issuer: cert.issuer }, Math.floor((cert.notAfterMs - deps.clock.nowMs()) / DAY_MS));
    },
  });
  new Gauge({
    name: "postroom_outbound_recipients_queued",
    help: "Recipients of sent messages waiting for a delivery attempt",
    registers: [registry],
    async collect() {
      this.set(await deps.queuedRecipients());
    },
  });
  new Gauge({
    name: "postroom_webhook_events_pending",
    help: "Message events waiting to be acknowledged by a webhook receiver",
    registers: [registry],
    async collect() {
      this.set(await deps.pendingEvents());
    },
  });
  const webhookEventsExpired = new Counter({
    name: "postroom_webhook_events_expired_total",
    help: "Message events dropped because their receiver did not acknowledge them within webhooks.max_age",
    registers: [registry],
  });
  new Gauge({
    name: "postroom_mail_in_flight_bytes",
    help: "Memory reserved by mail in flight (received, submitted or sent through the API and not yet posted, queued or refused), as limits.mail_in_flight counts it",
    registers: [registry],
    collect() {
      this.set(deps.mailInFlight().bytes);
    },
  });
  new Gauge({
    name: "postroom_mail_in_flight_budget_bytes",
    help: "limits.mail_in_flight: the memory mail in flight may hold at once",
    registers: [registry],
    collect() {
      this.set(deps.mailInFlight().budget);
    },
  });
  const mailRefusedMemory = new Counter({
    name: "postroom_mail_refused_memory_total",
    help: "Messages deferred (SMTP 451 4.3.1, API 503) because limits.mail_in_flight had no room for them, by listener",
    labelNames: ["listener"] as const,
    registers: [registry],
  });
  for (const listener of ["inbound", "submission", "api"]) mailRefusedMemory.inc({ listener }, 0);
  return { registry, webhookEventsExpired, mailRefusedMemory };
}
