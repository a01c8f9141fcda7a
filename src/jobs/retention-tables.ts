// Which repository purges which table of [retention]: the statuses, messages, events,
// webhook outbox, domain events, MTA-STS cache and idempotency keys each have their own SQL and their own
// rule for what is still needed. Built from a store alone, so that the purge thread
// (purge-worker.ts) can build them on its own connection.
import { createOutboxPurge } from "../events/outbox.repo.ts";
import { createStatusPurge } from "../inbound/statuses/statuses.repo.ts";
import { createOutboundPurge } from "../outbound/queue/purge.repo.ts";
import { purgePorts } from "../outbound/queue/wiring.ts";
import type { Purge } from "../store/purge-window.ts";
import {
  createDomainEventPurge,
  createEventPurge,
  createIdempotencyPurge,
  createStatsPurge,
  createStsPurge,
  createWebhookPostPurge,
} from "./purges.repo.ts";
import type { Store } from "../store/store.ts";
import type { RetentionTable } from "./retention.ts";

export function retentionPurges(store: Store): Record<RetentionTable, Purge> {
  const outbound = createOutboundPurge(store, purgePorts(store));
  return {
    incoming_statuses: createStatusPurge(store),
    messages: outbound.messages,
    bodies: outbound.bodies,
    events: createEventPurge(store),
    webhook_outbox: createOutboxPurge(store),
    domain_events: createDomainEventPurge(store),
    mta_sts_policies: createStsPurge(store),
    stats: createStatsPurge(store),
    idempotency_keys: createIdempotencyPurge(store),
    webhook_posts: createWebhookPostPurge(store),
  };
}
