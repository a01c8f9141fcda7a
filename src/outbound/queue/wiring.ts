// The outgoing queue's ports (ports.ts), each implemented by the feature that owns the table
// and built on the connection the queue writes through: store.db for the queue's commits,
// store.logDb for the retention purge.
import { pgRecordEvents } from "../../events/events.pg.repo.ts";
import { eventLog, eventRetention } from "../../events/events.repo.ts";
import type { Store } from "../../store/store.ts";
import { pgDb } from "../../store/db/pg-db.ts";
import { runOn, runSync } from "../../store/db/script.ts";
import { recordAnswer } from "../sending/idempotency.repo.ts";
import { suppressRecipient } from "../suppressions/suppressions.repo.ts";
import type { PgQueuePorts, PurgeEvents, QueuePorts } from "./ports.ts";

export function queuePorts(store: Store): QueuePorts {
  return {
    events: eventLog(store.db),
    suppressions: { suppress: (entry) => runSync(store.db, suppressRecipient(entry)) },
    answers: { record: (answer, nowMs) => runSync(store.db, recordAnswer(answer, nowMs)) },
  };
}

/** The same ports on PostgreSQL, each writing in the queue's transaction (createPgOutboundRepo). */
export function pgQueuePorts(): PgQueuePorts {
  return {
    events: { record: pgRecordEvents },
    suppressions: { suppress: (tx, entry) => runOn(pgDb(tx), suppressRecipient(entry)) },
    answers: { record: (tx, answer, nowMs) => runOn(pgDb(tx), recordAnswer(answer, nowMs)) },
  };
}

export function purgePorts(store: Store): PurgeEvents {
  return eventRetention(store.logDb);
}
