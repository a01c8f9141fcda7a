// Which PostgreSQL repository purges which table of [retention] (retentionPurges in
// retention-tables.ts on SQLite), for RetentionPurge's `purges`. They run on the event
// loop: PostgreSQL does the work in its own processes, and each window is a statement or a
// short transaction on the pool, so there is no thread to hand them to.
import type { SQL } from "bun";
import { createPgOutboxPurge } from "../events/outbox.pg.repo.ts";
import { createPgStatusPurge } from "../inbound/statuses/statuses.pg.repo.ts";
import { createPgOutboundPurge } from "../outbound/queue/purge.pg.repo.ts";
import type { Purge } from "../store/purge-window.ts";
import {
  createPgDomainEventPurge,
  createPgEventPurge,
  createPgIdempotencyPurge,
  createPgStatsPurge,
  createPgStsPurge,
  createPgWebhookPostPurge,
  pgEventRetention,
} from "./purges.pg.repo.ts";
import type { RetentionTable } from "./retention.ts";

export function pgRetentionPurges(sql: SQL): Record<RetentionTable, Purge> {
  const outbound = createPgOutboundPurge(sql, pgEventRetention);
  return {
    incoming_statuses: createPgStatusPurge(sql),
    messages: outbound.messages,
    bodies: outbound.bodies,
    events: createPgEventPurge(sql),
    webhook_outbox: createPgOutboxPurge(sql),
    domain_events: createPgDomainEventPurge(sql),
    mta_sts_policies: createPgStsPurge(sql),
    stats: createPgStatsPurge(sql),
    idempotency_keys: createPgIdempotencyPurge(sql),
    webhook_posts: createPgWebhookPostPurge(sql),
  };
}
