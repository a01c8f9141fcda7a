// The inbound metrics: messages received over SMTP by the reply at the end of DATA,
// refusals by reason, POSTs to targets and their duration, incoming status writes that
// failed or were lost. Registered by createMetrics (metrics.ts), which turns them into
// the Metrics methods; apart so each area's metrics read on their own.
import { Counter, Histogram, type Registry } from "prom-client";
import { INBOUND_OUTCOMES, SMTP_REFUSAL_REASONS } from "./labels.ts";

const MINUTE_S = 60;

/** Inbound: messages, refusals, target POSTs. */
export function inboundMetrics(registers: Registry[]) {
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
  return { inboundMessages, smtpRefusals, targetPosts, statusWritesFailed, statusesLost, targetPostSeconds };
}
