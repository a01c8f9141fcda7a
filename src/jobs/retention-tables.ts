// Which repository purges which table of [retention]: the statuses, messages, events,
// webhook outbox, domain events and MTA-STS cache each have their own SQL and their own
// rule for what is still needed.
import type { SendingDomainRepo } from "../domains/sending-domains.repo.ts";
import { createEventPurge } from "../events/events.repo.ts";
import type { OutboxRepo } from "../events/outbox.repo.ts";
import type { StatusRepo } from "../inbound/statuses.repo.ts";
import { createStsPurge } from "../outbound/mta-sts.repo.ts";
import { createOutboundPurge } from "../outbound/outbound-purge.repo.ts";
import type { Purge } from "../store/purge-window.ts";
import type { Store } from "../store/store.ts";
import type { RetentionTable } from "./retention.ts";

export function retentionPurges(store: Store, repos: { statuses: StatusRepo; outbox: OutboxRepo; sendingDomains: SendingDomainRepo }): Record<RetentionTable, Purge> {
  const outbound = createOutboundPurge(store);
  return {
    incoming_statuses: repos.statuses.purge,
    messages: outbound.messages,
    bodies: outbound.bodies,
    events: createEventPurge(store),
    webhook_outbox: repos.outbox.purgeFinished,
    domain_events: repos.sendingDomains.purgeEvents,
    mta_sts_policies: createStsPurge(store),
  };
}
