// The dispatcher runs the outbox queries on every wake-up, and a receiver that is down
// for days leaves a backlog of pending events: every query must be an index lookup, never
// a scan of the table, or sending slows down as the backlog grows. SQLite's own query
// plans say which it is.
import { afterAll, expect, test } from "bun:test";
import { createOutboxRepo } from "../../src/events/outbox.repo.ts";
import { openStore } from "../../src/store/store.ts";
import { tempDir } from "../helpers/tmp.ts";

const dir = tempDir();
afterAll(() => dir.remove());

test("every outbox query the dispatcher runs uses an index", async () => {
  const store = openStore(dir.path);
  const seen = new Set<string>();
  const query = store.db.query.bind(store.db);
  (store.db as { query: typeof query }).query = ((sql: string) => {
    seen.add(sql);
    return query(sql);
  }) as typeof query;
  const repo = createOutboxRepo(store);
  await repo.pendingTargets();
  await repo.claimBatch("a0000000000000f1", Date.now(), 100, 60_000);
  await repo.finishSent({ batchId: "msg_x", untilMs: Date.now() });
  await repo.finishRetry({ batchId: "msg_x", untilMs: Date.now() }, Date.now());
  await repo.expire(Date.now(), 1000);
  expect(seen.size).toBeGreaterThanOrEqual(5);
  for (const sql of seen) {
    if (!/webhook_outbox/.test(sql)) continue;
    const plan = (
      query(`EXPLAIN QUERY PLAN ${sql}`).all(...new Array((sql.match(/\?/g) ?? []).length).fill(null)) as { detail: string }[]
    ).map((r) => r.detail);
    expect({ sql, scans: plan.filter((d) => /^SCAN (webhook_outbox|o)\b/.test(d)) }).toEqual({ sql, scans: [] });
  }
  store.close();
});
