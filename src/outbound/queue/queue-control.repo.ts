// SQL for the operator's view of the outgoing queue and its bulk actions
// (queue-control.port.ts), written once for SQLite and PostgreSQL against a Db. An action
// changes only recipients no worker holds at that moment (locked_until past): one being
// delivered finishes its attempt, as the dashboard's cancel does (queue.repo.ts). A held
// recipient has state 'held': claimDue, dueNow, renewals and the queue depth read
// state = 'queued' only, so nothing attempts it, on any node, until it is released.
import type { Db } from "../../store/db/db.ts";
import { collateC, containsText, toInt } from "../../store/db/dialect.ts";
import { empty, inList, type Sql, sql } from "../../store/db/sql.ts";
import type {
  ControlEvents,
  DestinationSummary,
  QueueControlRepo,
  QueueEntry,
  QueueEntryState,
  QueueFilter,
} from "./queue-control.port.ts";
import { bounceClassPattern } from "./search.repo.ts";

/**
 * A recipient's destination, in one place: the one the delivery worker resolved it to (a
 * [[outbound.destinations]] rule's name), else, not resolved yet, its domain.
 */
export const DESTINATION = sql`COALESCE(r.destination, r.domain)`;

/** Whether the destination `q.destination` is paused now (destination_pauses: an operator's, or a throttle's until its end). */
const paused = (nowMs: number) =>
  sql`CASE WHEN EXISTS (SELECT 1 FROM destination_pauses p WHERE p.destination = q.destination
    AND (p.until_at IS NULL OR p.until_at > ${nowMs})) THEN 1 ELSE 0 END`;

/**
 * Recipients a scheduled send keeps back, in one place: their message has a send_at (E11,
 * issue 34) and they were never attempted. As E12's status:scheduled, one stays so for up to
 * a second past its time, until the worker claims it.
 */
const SCHEDULED = sql`(m.send_at IS NOT NULL AND r.attempts = 0)`;

/** Rows changed per statement by cancel, so that one action never holds the write lock (or memory) for long. */
export const CANCEL_BATCH_ROWS = 1000;

const notLeased = (nowMs: number) => sql`(locked_until IS NULL OR locked_until < ${nowMs})`;

/** The filter's conditions on r (recipients) and m (their messages). */
function conditions(f: QueueFilter, nowMs: number): Sql {
  return sql`${f.destination !== undefined ? sql`AND ${DESTINATION} = ${f.destination.toLowerCase()}` : empty}
    ${f.outboundAccountId !== undefined ? sql`AND m.outbound_account_id = ${f.outboundAccountId}` : empty}
    ${f.messageId !== undefined ? sql`AND r.message_id = ${f.messageId}` : empty}
    ${f.olderThanMs !== undefined ? sql`AND m.created_at <= ${nowMs - f.olderThanMs}` : empty}`;
}

/** The IDs of the recipients in `state` the filter picks, as a subquery. */
const picked = (state: "queued" | "held", f: QueueFilter, nowMs: number) =>
  sql`SELECT r.id FROM outbound_recipients r JOIN outbound_messages m ON m.id = r.message_id WHERE r.state = ${state} ${conditions(f, nowMs)}`;

/** The latest failed attempt's reply of recipient r, as a subquery. */
const LAST_FAILURE = sql`(SELECT e.details_json FROM message_events e WHERE e.recipient_id = r.id AND e.kind IN ('soft_bounce', 'error') ORDER BY e.seq DESC LIMIT 1)`;

/** The reply an event's details carry: the SMTP reply, or our own error's message. */
function responseOf(detailsJson: unknown): string | null {
  if (typeof detailsJson !== "string") return null;
  const d = JSON.parse(detailsJson) as { smtp_response?: unknown; message?: unknown };
  const text = d.smtp_response ?? d.message;
  return typeof text === "string" ? text : null;
}

const stateCondition: Record<QueueEntryState, Sql> = {
  queued: sql`AND r.state = 'queued' AND NOT (${SCHEDULED})`,
  held: sql`AND r.state = 'held'`,
  scheduled: sql`AND r.state = 'queued' AND ${SCHEDULED}`,
};

interface EntryRow {
  id: string;
  message_id: string;
  outbound_account_id: string;
  email: string;
  destination: string;
  state: string;
  scheduled: unknown;
  attempts: unknown;
  next_attempt_at: unknown;
  last_json: unknown;
}

interface SummaryRow {
  destination: string;
  queued: unknown;
  held: unknown;
  paused: unknown;
  oldest_at: unknown;
  last_json: unknown;
}

/** `events` records cancel's `error` events in its transaction; `onEvents` runs after a commit that recorded some (the webhook dispatcher wakes up). */
export function createQueueControlRepo(db: Db, events: ControlEvents, onEvents: () => void = () => {}): QueueControlRepo {
  return {
    async list(filter, limit) {
      const rows = await db.all<EntryRow>(sql`SELECT r.id, r.message_id, m.outbound_account_id, r.email, ${DESTINATION} AS destination,
          r.state, CASE WHEN ${SCHEDULED} THEN 1 ELSE 0 END AS scheduled, r.attempts, r.next_attempt_at, ${LAST_FAILURE} AS last_json
        FROM outbound_recipients r JOIN outbound_messages m ON m.id = r.message_id
        WHERE r.state IN ('queued', 'held') ${filter.state ? stateCondition[filter.state] : empty}
          ${conditions({ destination: filter.destination, outboundAccountId: filter.outboundAccountId }, 0)}
        ORDER BY r.next_attempt_at, r.id${collateC} LIMIT ${limit}`);
      return rows.map(
        (r): QueueEntry => ({
          id: r.id,
          messageId: r.message_id,
          outboundAccountId: r.outbound_account_id,
          recipient: r.email,
          destination: r.destination,
          state: r.state === "held" ? "held" : toInt(r.scheduled, "scheduled") === 1 ? "scheduled" : "queued",
          attempts: toInt(r.attempts, "outbound_recipients.attempts"),
          nextAttemptAtMs: toInt(r.next_attempt_at, "outbound_recipients.next_attempt_at"),
          lastResponse: responseOf(r.last_json),
        }),
      );
    },

    async summary(limit, nowMs) {
      // Grouped once; the latest failure per destination read from its own waiting recipients.
      const rows = await db.all<SummaryRow>(sql`WITH q AS (
          SELECT ${DESTINATION} AS destination, r.id, r.state, m.created_at
          FROM outbound_recipients r JOIN outbound_messages m ON m.id = r.message_id WHERE r.state IN ('queued', 'held'))
        SELECT q.destination,
          SUM(CASE WHEN q.state = 'queued' THEN 1 ELSE 0 END) AS queued,
          SUM(CASE WHEN q.state = 'held' THEN 1 ELSE 0 END) AS held,
          ${paused(nowMs)} AS paused,
          MIN(q.created_at) AS oldest_at,
          (SELECT e.details_json FROM q q2 JOIN message_events e ON e.recipient_id = q2.id
            WHERE q2.destination = q.destination AND e.kind IN ('soft_bounce', 'error') ORDER BY e.created_at DESC, e.seq DESC LIMIT 1) AS last_json
        FROM q GROUP BY q.destination ORDER BY COUNT(*) DESC, q.destination${collateC} LIMIT ${limit}`);
      return rows.map(
        (r): DestinationSummary => ({
          destination: r.destination,
          queued: toInt(r.queued, "queued"),
          held: toInt(r.held, "held"),
          paused: toInt(r.paused, "paused") === 1,
          oldestAtMs: toInt(r.oldest_at, "outbound_messages.created_at"),
          lastResponse: responseOf(r.last_json),
        }),
      );
    },

    async hold(filter, nowMs) {
      const res = await db.run(sql`UPDATE outbound_recipients SET state = 'held'
        WHERE state = 'queued' AND ${notLeased(nowMs)} AND id IN (${picked("queued", filter, nowMs)})`);
      return res.changes;
    },

    async release(filter, nowMs) {
      const res = await db.run(sql`UPDATE outbound_recipients SET state = 'queued', next_attempt_at = ${nowMs}
        WHERE state = 'held' AND id IN (${picked("held", filter, nowMs)})`);
      return res.changes;
    },

    async retry(filter, nowMs) {
      const res = await db.run(sql`UPDATE outbound_recipients SET next_attempt_at = ${nowMs}
        WHERE state = 'queued' AND ${notLeased(nowMs)} AND id IN (${picked("queued", filter, nowMs)})`);
      return res.changes;
    },

    async cancel(filter, nowMs, reason, webhook) {
      let cancelled = 0;
      for (;;) {
        const batch = await db.tx(async (tx) => {
          const found = await tx.all<{ id: string; message_id: string; attempts: unknown; outbound_account_id: string }>(
            sql`SELECT r.id, r.message_id, r.attempts, m.outbound_account_id FROM outbound_recipients r JOIN outbound_messages m ON m.id = r.message_id
              WHERE r.state IN ('queued', 'held') AND ${notLeased(nowMs)} ${conditions(filter, nowMs)} LIMIT ${CANCEL_BATCH_ROWS}`,
          );
          if (found.length === 0) return { ended: 0, more: false };
          // Re-checked here: on PostgreSQL a node may have claimed one since the SELECT.
          const ended = new Set(
            (
              await tx.all<{ id: string }>(sql`UPDATE outbound_recipients SET status = 'error', state = 'done'
                WHERE ${inList(
                  "id",
                  found.map((r) => r.id),
                )} AND state IN ('queued', 'held') AND ${notLeased(nowMs)} RETURNING id`)
            ).map((r) => r.id),
          );
          for (const hook of [true, false]) {
            const mine = found.filter((r) => ended.has(r.id) && webhook(r.outbound_account_id) === hook);
            const errors = mine.map((r) => ({
              messageId: r.message_id,
              recipientId: r.id,
              kind: "error" as const,
              details: { message: reason, attempt: toInt(r.attempts, "outbound_recipients.attempts"), retried: false },
              createdAtMs: nowMs,
            }));
            if (errors.length > 0) await events.record(tx, errors, { webhook: hook });
          }
          // A batch whose rows were all claimed meanwhile ends the loop: they are being delivered.
          return { ended: ended.size, more: found.length === CANCEL_BATCH_ROWS && ended.size > 0 };
        });
        cancelled += batch.ended;
        if (batch.ended > 0) onEvents();
        if (!batch.more) return cancelled;
      }
    },

    async redeliver(req, nowMs) {
      const f: QueueFilter = { destination: req.destination, outboundAccountId: req.outboundAccountId };
      const bounced = sql`SELECT r.id FROM outbound_recipients r JOIN outbound_messages m ON m.id = r.message_id
          WHERE r.state = 'done' AND r.status = 'bounce' ${conditions(f, nowMs)}
            AND EXISTS (SELECT 1 FROM message_events e WHERE e.recipient_id = r.id AND e.kind = 'bounce' AND e.created_at >= ${req.sinceMs}
              AND ${containsText(sql`e.details_json`, bounceClassPattern(req.bounceClass))})`;
      return db.tx(async (tx) => {
        // Only a hard bounce suppresses: redelivering hard bounces (a provider's false "no such
        // user") lifts the suppression they made, or the address's next mail would still be
        // refused. Complaints and manual entries stay.
        if (req.bounceClass === "hard")
          await tx.run(sql`DELETE FROM suppressions WHERE reason = 'bounce' AND EXISTS (
            SELECT 1 FROM outbound_recipients b JOIN outbound_messages bm ON bm.id = b.message_id
            WHERE b.id IN (${bounced}) AND bm.outbound_account_id = suppressions.outbound_account_id AND b.email = suppressions.email)`);
        const res =
          await tx.run(sql`UPDATE outbound_recipients SET state = 'queued', next_attempt_at = ${nowMs}, locked_by = NULL, locked_until = NULL
          WHERE state = 'done' AND status = 'bounce' AND id IN (${bounced})`);
        return res.changes;
      });
    },
  };
}
