// SQL of the retention purge for sent messages on PostgreSQL, the same rules as
// purge.repo.ts on SQLite (engine-specific: see below, other nodes write meanwhile): whole messages (with their recipients, events and raw bodies)
// and, sooner, the raw bodies alone; a message with a recipient still queued, or with an
// event not yet posted to its webhook, keeps everything whatever its age.
//
// Other nodes keep delivering and recording events meanwhile. A window is read without
// locks; the messages it may delete are then locked (FOR UPDATE) with the rules checked
// again, in a transaction of a few statements over at most one window's rows, which
// deletes them with their recipients, bodies and events. A recipient is never queued again
// once it left the queue, so that rule cannot change under the purge. An open or a click
// recorded by another node in the very moment its message (older than retention.messages)
// goes is kept without its message, as on SQLite when it comes just after the purge. A
// body's delete is one statement that checks its message again (pg-purge-window.ts).
import type { SQL, TransactionSQL } from "bun";
import { pgRowidPurge, pgWindowRows } from "../../store/pg-purge-window.ts";
import { pgInteger } from "../../store/pg-values.ts";
import { planWindow } from "../../store/purge-window.ts";
import type { OutboundPurge } from "./purge.repo.ts";

/** The events feature's side of the purge on PostgreSQL (pgEventRetention in src/jobs/purges.pg.repo.ts), in the purge's transaction. */
export interface PgPurgeEvents {
  /** The messages among `messageIds` with an event still waiting for its webhook POST. */
  pendingAmong(tx: TransactionSQL, messageIds: readonly string[]): Promise<Set<string>>;
  /** Deletes every event of the messages with its webhook bookkeeping. */
  deleteOfMessages(tx: TransactionSQL, messageIds: readonly string[]): Promise<void>;
}

export function createPgOutboundPurge(sql: SQL, events: PgPurgeEvents): OutboundPurge {
  const queued = sql`EXISTS (SELECT 1 FROM outbound_recipients r WHERE r.message_id = m.id AND r.state IN ('queued', 'held'))`;

  const messages = async (beforeMs: number, afterRowid: number, limit: number) => {
    const rows: { rowid: unknown; id: string; at: unknown; keep: unknown }[] =
      await sql`SELECT m.rowid, m.id, m.created_at AS at, ${queued} AS keep FROM outbound_messages m WHERE m.rowid > ${afterRowid} ORDER BY m.rowid LIMIT ${limit}`;
    const ids = new Map(rows.map((r) => [pgInteger(r.rowid, "outbound_messages.rowid"), r.id]));
    const plan = planWindow(pgWindowRows(rows, "outbound_messages"), beforeMs, limit, true);
    const candidates = plan.remove.map((r) => ids.get(r.rowid)!);
    const deleted =
      candidates.length === 0
        ? 0
        : await sql.begin(async (tx) => {
            // The rules again, on the rows as they are now, and locked until the commit.
            const locked: { id: string }[] = await tx`SELECT m.id FROM outbound_messages m
              WHERE m.id = ANY(${candidates}) AND m.created_at < ${beforeMs} AND NOT ${queued} ORDER BY m.id FOR UPDATE OF m`;
            const waiting =
              locked.length > 0
                ? await events.pendingAmong(
                    tx,
                    locked.map((r) => r.id),
                  )
                : new Set<string>();
            const doomed = locked.map((r) => r.id).filter((id) => !waiting.has(id));
            if (doomed.length === 0) return 0;
            // Children first: recipients and bodies reference the message.
            await events.deleteOfMessages(tx, doomed);
            await tx`DELETE FROM outbound_recipients WHERE message_id = ANY(${doomed})`;
            await tx`DELETE FROM outbound_message_bodies WHERE message_id = ANY(${doomed})`;
            return (await tx`DELETE FROM outbound_messages WHERE id = ANY(${doomed})`).count;
          });
    return { deleted, next: plan.next };
  };

  // Bodies are stored in the transaction that stores their message, so in its order.
  const bodies = pgRowidPurge("outbound_message_bodies", {
    window: (afterRowid, limit) =>
      sql`SELECT b.rowid, m.created_at AS at, ${queued} AS keep FROM outbound_message_bodies b JOIN outbound_messages m ON m.id = b.message_id
        WHERE b.rowid > ${afterRowid} ORDER BY b.rowid LIMIT ${limit}`,
    remove: async (rowids, beforeMs) =>
      (
        await sql`DELETE FROM outbound_message_bodies b USING outbound_messages m
        WHERE m.id = b.message_id AND b.rowid = ANY(${rowids}) AND m.created_at < ${beforeMs} AND NOT ${queued}`
      ).count,
  });

  return { messages, bodies };
}
