// The outgoing queue's ports (ports.ts), each implemented by the feature that owns the table
// and built on the connection the queue writes through: store.db for the queue's commits,
// store.logDb for the retention purge.
import { eventLog, eventRetention } from "../../events/events.repo.ts";
import type { Store } from "../../store/store.ts";
import { answerRecorder } from "../sending/idempotency.repo.ts";
import { recipientSuppressor } from "../suppressions/suppressions.repo.ts";
import type { PurgeEvents, QueuePorts } from "./ports.ts";

export function queuePorts(store: Store): QueuePorts {
  return { events: eventLog(store.db), suppressions: recipientSuppressor(store.db), answers: answerRecorder(store.db) };
}

export function purgePorts(store: Store): PurgeEvents {
  return eventRetention(store.logDb);
}
