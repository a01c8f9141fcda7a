// Migration 0010 (webhook endpoints) on a store that has webhook events waiting, on both
// engines: the waiting rows keep every value and become the config webhook's lane (target =
// their outbound account), still claimable as the same batch; one event can then wait for
// several receivers (the key is the event and the target).
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { Database } from "bun:sqlite";
import { join } from "node:path";
import { SQL } from "bun";
import { parsePostgresUrl } from "../../src/config/store-url.ts";
import { MIGRATIONS } from "../../src/store/migrations/index.ts";
import { POSTGRES_MIGRATIONS } from "../../src/store/migrations/postgres/index.ts";
import { migratePostgres } from "../../src/store/postgres-migrate.ts";
import { DATABASE_FILE } from "../../src/store/store.ts";
import { migrateSqlite } from "../../src/store/sqlite-migrate.ts";
import { postgresAvailable, startPostgres, type Postgres } from "../helpers/postgres.ts";
import { tempDir } from "../helpers/tmp.ts";
import { requireTools } from "../helpers/tools.ts";

const BEFORE = (m: { version: number }) => m.version < 10;
const COLUMNS = "event_id, account_id, outbound_account_id, message_id, seq, state, batch_id, attempts, next_attempt_at, created_at";
const ROWS = [
  "('e1', 'acct', 'oa', 'm1', 1, 'pending', 'msg_b1', 2, 1795000060000, 1795000000000)",
  "('e2', 'acct', 'oa', 'm1', 2, 'pending', NULL, 0, 1795000000001, 1795000000001)",
  "('e3', 'acct', 'ob', 'm2', 3, 'sent', 'msg_b2', 1, 1795000000002, 1795000000002)",
];
const EXPECTED = [
  { event_id: "e1", outbound_account_id: "oa", state: "pending", batch_id: "msg_b1", attempts: 2, target: "oa" },
  { event_id: "e2", outbound_account_id: "oa", state: "pending", batch_id: null, attempts: 0, target: "oa" },
  { event_id: "e3", outbound_account_id: "ob", state: "sent", batch_id: "msg_b2", attempts: 1, target: "ob" },
];
const SECOND_RECEIVER = `INSERT INTO webhook_outbox (${COLUMNS}, target) VALUES ('e1', 'acct', 'oa', 'm1', 1, 'pending', NULL, 0, 1, 1, 'endpoint:x')`;
const READ = "SELECT event_id, outbound_account_id, state, batch_id, attempts, target FROM webhook_outbox ORDER BY event_id, target";

describe("migration 0010 with webhook events waiting", () => {
  test("SQLite: every row kept, in the config webhook's lane; an event may then wait for two receivers", () => {
    const dir = tempDir();
    try {
      migrateSqlite(dir.path, MIGRATIONS.filter(BEFORE));
      const before = new Database(join(dir.path, DATABASE_FILE));
      before.run(`INSERT INTO webhook_outbox (${COLUMNS}) VALUES ${ROWS.join(", ")}`);
      before.close();
      expect(migrateSqlite(dir.path).applied.map((m) => m.name)[0]).toBe("webhook_endpoints");
      const after = new Database(join(dir.path, DATABASE_FILE));
      expect(after.query(READ).all()).toEqual(EXPECTED);
      after.run(SECOND_RECEIVER);
      expect(after.query("SELECT COUNT(*) AS n FROM webhook_outbox WHERE event_id = 'e1'").get()).toEqual({ n: 2 });
      after.close();
    } finally {
      dir.remove();
    }
  });

  const pgTest = requireTools("postgresql");
  let pg: Postgres | undefined;
  beforeAll(async () => {
    if (postgresAvailable()) pg = await startPostgres();
  }, 60_000);
  afterAll(async () => pg?.stop());

  pgTest("PostgreSQL: every row kept, in the config webhook's lane; an event may then wait for two receivers", async () => {
    const at = parsePostgresUrl(pg!.url)!;
    await migratePostgres(at, { connectTimeoutMs: 5_000, migrations: POSTGRES_MIGRATIONS.filter(BEFORE) });
    const sql = new SQL(pg!.url, { max: 1 });
    try {
      await sql.unsafe(`INSERT INTO webhook_outbox (${COLUMNS}) VALUES ${ROWS.join(", ")}`);
      const result = await migratePostgres(at, { connectTimeoutMs: 5_000 });
      expect(result.applied.map((m) => m.name)[0]).toBe("webhook_endpoints");
      const rows = (await sql.unsafe(READ)) as Record<string, unknown>[];
      expect(rows.map((r) => ({ ...r, attempts: Number(r.attempts) }))).toEqual(EXPECTED);
      await sql.unsafe(SECOND_RECEIVER);
      expect(Number((await sql.unsafe("SELECT COUNT(*) AS n FROM webhook_outbox WHERE event_id = 'e1'"))[0].n)).toBe(2);
    } finally {
      await sql.close();
    }
  });
});
