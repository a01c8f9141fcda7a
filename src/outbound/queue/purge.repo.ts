// SQL of the retention purge for sent messages: whole messages (with their recipients,
// events and raw bodies) and, sooner, the raw bodies alone. A message with a recipient
// still queued (waiting for an attempt, or leased by a worker) keeps everything: the
// worker reads its row and body at every attempt. A message with an event not yet posted
// to its webhook keeps everything too: the dispatcher reads the event and its recipient.
//
// Through the log connection: these are not mail we still hold, and a purge lost in a
// power cut is done again at the next run, so its commits need not wait for fsync.
// Engine-specific (purge.pg.repo.ts is PostgreSQL's): here the purge runs on a thread of
// its own with the store to itself between windows; on PostgreSQL other nodes write while
// it runs, so it locks what it deletes and checks the rules again.
import { planWindow, rowidPurge, type Purge, type WindowRow } from "../../store/purge-window.ts";
import type { Store } from "../../store/store.ts";
import type { PurgeEvents } from "./ports.ts";

type MessageWindowRow = WindowRow & { id: string };

export interface OutboundPurge {
  /** Messages created before the cutoff, with their recipients, events and bodies. */
  messages: Purge;
  /** Raw bodies of messages created before the cutoff (the messages stay). */
  bodies: Purge;
}

const QUEUED = "EXISTS (SELECT 1 FROM outbound_recipients r WHERE r.message_id = m.id AND r.state IN ('queued', 'held'))";

/** `events`: the events feature's side (wiring.ts, purgePorts), on the same connection. */
export function createOutboundPurge(store: Store, events: PurgeEvents): OutboundPurge {
  const db = store.logDb;

  const messageWindow = db.query<MessageWindowRow, [number, number]>(
    `SELECT m.rowid AS rowid, m.id AS id, m.created_at AS at, ${QUEUED} AS keep FROM outbound_messages m WHERE m.rowid > ? ORDER BY m.rowid LIMIT ?`,
  );
  const removeRecipients = db.query("DELETE FROM outbound_recipients WHERE message_id IN (SELECT value FROM json_each(?))");
  const removeBodies = db.query("DELETE FROM outbound_message_bodies WHERE message_id IN (SELECT value FROM json_each(?))");
  const removeMessages = db.query("DELETE FROM outbound_messages WHERE id IN (SELECT value FROM json_each(?))");
  const purgeMessages = db.transaction((beforeMs: number, afterRowid: number, limit: number) => {
    const plan = planWindow(messageWindow.all(afterRowid, limit), beforeMs, limit, true);
    let ids = plan.remove.map((r) => r.id);
    if (ids.length > 0) {
      const waiting = events.pendingAmong(JSON.stringify(ids));
      ids = ids.filter((id) => !waiting.has(id));
    }
    if (ids.length > 0) {
      const param = JSON.stringify(ids);
      // Children first: recipients and bodies reference the message.
      events.deleteOfMessages(param);
      removeRecipients.run(param);
      removeBodies.run(param);
      removeMessages.run(param);
    }
    return { deleted: ids.length, next: plan.next };
  });

  // Bodies are stored in the transaction that stores their message, so in its order.
  const bodyWindow = db.query<WindowRow, [number, number]>(
    `SELECT b.rowid AS rowid, m.created_at AS at, ${QUEUED} AS keep FROM outbound_message_bodies b JOIN outbound_messages m ON m.id = b.message_id WHERE b.rowid > ? ORDER BY b.rowid LIMIT ?`,
  );
  const removeBodyRows = db.query("DELETE FROM outbound_message_bodies WHERE rowid IN (SELECT value FROM json_each(?))");

  return {
    // IMMEDIATE: read, then delete from, while the appliance commits from another thread.
    messages: async (beforeMs, afterRowid, limit) => purgeMessages.immediate(beforeMs, afterRowid, limit),
    bodies: rowidPurge(db, bodyWindow, (rowids) => removeBodyRows.run(rowids)),
  };
}
