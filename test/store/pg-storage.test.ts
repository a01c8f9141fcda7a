// How PostgreSQL stores the queue's rows (migration 0014 queue_storage, issue 38).
//
// outbound_recipients keeps room on each page for a row's later versions
// (migration 0014 queue_storage, issue 38): the claim's lease and the worker's destination change no
// indexed column, so their updates are HOT (no index entries) when the new version stays on
// the row's page. With pages filled by the inserts, the versions moved to other pages.
//
// A message's body over 2 KB is compressed with lz4 (Debian's PostgreSQL has it), about half
// pglz's CPU for a 4 KB mail.
import { afterAll, beforeAll, describe, expect } from "bun:test";
import { SQL } from "bun";
import { postgresAvailable, startMigratedPostgres, type Postgres } from "../helpers/postgres.ts";
import { requireTools } from "../helpers/tools.ts";

const pgTest = requireTools("postgresql");
const RECIPIENTS = 400;
/** Recipients a claim takes at once. */
const HAND = 20;

/** A message row for the recipients or the body to belong to. */
const insertMessage = (sql: SQL, id: string) =>
  sql`INSERT INTO outbound_messages (id, account_id, outbound_account_id, mail_from, message_id, to_json, cc_json, tags_json, test_mode, priority, size, created_at)
    VALUES (${id}, 'acc', 'oa', 'a@example.test', ${`<${id}@example.test>`}, '[]', '[]', '[]', 0, 'normal', 10, 0)`;

describe("the queue's storage on PostgreSQL", () => {
  let pg: Postgres | undefined;
  let sql: SQL;
  beforeAll(async () => {
    if (!postgresAvailable()) return;
    pg = await startMigratedPostgres();
    sql = new SQL(pg.url, { max: 1 });
  }, 60_000);
  afterAll(async () => {
    await sql?.close();
    await pg?.stop();
  });

  pgTest("outbound_recipients: the claim's and the destination's versions stay on the row's page, almost all", async () => {
    await insertMessage(sql, "msg_1");
    // As the queue writes them: one insert per send, pages filled in order.
    for (let i = 0; i < RECIPIENTS; i++)
      await sql`INSERT INTO outbound_recipients (id, message_id, position, email, domain, type, status, state, lane, attempts, next_attempt_at)
          VALUES (${`rcpt_${String(i).padStart(6, "0")}_with_an_id_as_long_as_real_ones`}, 'msg_1', ${i}, ${`user${i}@example.test`}, 'example.test', 'to', 'queued', 'queued', 1, 0, 0)`;
    const pages = async () =>
      (await sql`SELECT id, (ctid::text::point)[0] AS page FROM outbound_recipients ORDER BY id`) as { id: string; page: number }[];
    const before = await pages();
    // Claimed a hand at a time: the lease, then the delivery worker's destination
    // (queue.pg.repo.ts, destinations.repo.ts), each its own statement as there.
    for (let i = 0; i < RECIPIENTS; i += HAND) {
      const ids = before.slice(i, i + HAND).map((r) => r.id);
      await sql`UPDATE outbound_recipients SET locked_by = 'worker-1', locked_until = 60000 WHERE id = ANY(${sql.array(ids, "TEXT")})`;
      await sql`UPDATE outbound_recipients SET destination = 'example.test' WHERE id = ANY(${sql.array(ids, "TEXT")}) AND destination IS NULL`;
    }
    const after = await pages();
    const moved = after.filter((r, i) => r.page !== before[i]!.page).length;
    // A few rows move where a page's dead versions were not yet pruned (18 of 400 here);
    // with full pages, 230 of 400 moved.
    expect(moved).toBeLessThanOrEqual(RECIPIENTS / 10);
  });

  pgTest("outbound_message_bodies: a body over 2 KB is compressed with lz4", async () => {
    await insertMessage(sql, "msg_2");
    const raw = Buffer.from(`Subject: news\r\n\r\n${"Thanks for being part of the early access group. ".repeat(80)}\r\n`);
    await sql`INSERT INTO outbound_message_bodies (message_id, raw) VALUES ('msg_2', ${raw})`;
    const [row] = (await sql`SELECT pg_column_compression(raw) AS method, raw FROM outbound_message_bodies WHERE message_id = 'msg_2'`) as {
      method: string;
      raw: Uint8Array;
    }[];
    expect(row!.method).toBe("lz4");
    expect(Buffer.from(row!.raw).equals(raw)).toBe(true);
  });
});
