// The metrics of the node itself: HTTP requests and their duration, the TLS certificate's
// expiry, the memory held by mail in flight (limits.mail_in_flight) and the messages it
// deferred, and the runs of periodic jobs. Registered by createMetrics (metrics.ts),
// which turns them into the Metrics methods; apart so each area's metrics read on their own.
import { Counter, Gauge, Histogram, type Registry } from "prom-client";
import type { TlsStatus } from "../tls/manager.ts";

/** What the node's gauges read when scraped (a part of MetricsDeps). */
export interface NodeGauges {
  tls(): TlsStatus;
  /** Bytes the memory budget holds for mail in flight now, and the budget (src/lib/memory-budget.ts). */
  mailInFlight(): { bytes: number; budget: number; waiting: number };
}

/** HTTP, TLS, memory and jobs. */
export function nodeMetrics(registers: Registry[], deps: NodeGauges) {
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
  return { httpRequests, httpSeconds, mailRefusedMemory, jobRuns };
}
