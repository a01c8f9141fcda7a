// The outgoing queue's ports (ports.ts), each implemented by the feature that owns the table
// and built on the connection the queue writes through: store.db for the queue's commits,
// store.logDb for the retention purge.
import { eventsOfRecipients, recordEvents } from "../../events/events.repo.ts";
import { eventRetention } from "../../events/message-purge.repo.ts";
import type { Store } from "../../store/store.ts";
import { pgTxDb } from "../../store/db/pg-db.ts";
import { runOn, runSync } from "../../store/db/script.ts";
import { recordAnswer } from "../sending/idempotency.repo.ts";
import { suppressRecipient } from "../suppressions/suppressions.repo.ts";
import type { PgQueuePorts, PurgeEvents, QueuePorts } from "./ports.ts";
import type { ControlEvents } from "./queue-control.port.ts";

export function queuePorts(store: Store): QueuePorts {
  return {
    events: {
      record: (events, opts) => runSync(store.db, recordEvents(events, opts)),
      ofRecipients: (recipientIds) => runSync(store.db, eventsOfRecipients(recipientIds)),
    },
    suppressions: { suppress: (entry) => runSync(store.db, suppressRecipient(entry)) },
    answers: { record: (answer, nowMs) => runSync(store.db, recordAnswer(answer, nowMs)) },
  };
}

/** The same ports on PostgreSQL, each writing in the queue's transaction (createPgOutboundRepo). */
export function pgQueuePorts(): PgQueuePorts {
  return {
    events: { record: (tx, events, opts) => runOn(pgTxDb(tx), recordEvents(events, opts)) },
    suppressions: { suppress: (tx, entry) => runOn(pgTxDb(tx), suppressRecipient(entry)) },
    answers: { record: (tx, answer, nowMs) => runOn(pgTxDb(tx), recordAnswer(answer, nowMs)) },
  };
}

/** Cancel's `error` events, recorded by the events feature in the queue control's transaction (queue-control.repo.ts). */
export const controlEvents: ControlEvents = {
  record: (tx, events, opts) => runOn(tx, recordEvents(events, opts)),
};

export function purgePorts(store: Store): PurgeEvents {
  return eventRetention(store.logDb);
}
