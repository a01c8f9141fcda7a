// The PostgreSQL engine's two pools (src/store/engine/postgres.ts): logDb's commits do not
// wait for the WAL flush (synchronous_commit = off, as SQLite's log connection runs with
// synchronous=NORMAL), the main pool's do, and together they never open more than
// store.max_connections.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { SQL } from "bun";
import { silentLogger } from "../../src/lib/logger.ts";
import { sql } from "../../src/store/db/sql.ts";
import type { PostgresEngine } from "../../src/store/engine/engine.ts";
import { logPoolSize, MIN_MAIN_POOL, openPostgresEngine } from "../../src/store/engine/postgres.ts";
import { DURABLE_SETTINGS, type Postgres, postgresAvailable, startMigratedPostgres } from "../helpers/postgres.ts";
import { tempDir } from "../helpers/tmp.ts";

test.each([
  [2, 0],
  [3, 1],
  [4, 1],
  [5, 1],
  [10, 2],
  [20, 4],
  [1000, 200],
])("of store.max_connections = %i, %i go to the log pool", (max, log) => {
  expect(logPoolSize(max)).toBe(log);
  expect(max - logPoolSize(max)).toBeGreaterThanOrEqual(MIN_MAIN_POOL);
});

describe.skipIf(!postgresAvailable())("the PostgreSQL engine's pools", () => {
  const dir = tempDir();
  let pg: Postgres;
  let engine: PostgresEngine;
  let observer: SQL;
  beforeAll(async () => {
    // Durable as in production: the tests' servers run with synchronous_commit off.
    pg = await startMigratedPostgres({ settings: DURABLE_SETTINGS });
    engine = await openPostgresEngine(
      { url: pg.url, dataDir: dir.path, connectTimeoutMs: 10_000, maxConnections: 5, nodeId: "n1" },
      silentLogger,
    );
    observer = new SQL(pg.url, { max: 1 });
  });
  afterAll(async () => {
    await engine?.close();
    await observer?.close();
    await pg?.stop();
    dir.remove();
  });

  test("logDb commits without waiting for the WAL flush; the main Db waits", async () => {
    expect(await engine.logDb.get(sql`SELECT current_setting('synchronous_commit') AS s`)).toEqual({ s: "off" });
    expect(await engine.db.get(sql`SELECT current_setting('synchronous_commit') AS s`)).toEqual({ s: "on" });
  });

  test("with max_connections = 2 there is one pool: logDb is the main one and waits for the flush", async () => {
    const small = await openPostgresEngine(
      { url: pg.url, dataDir: dir.path, connectTimeoutMs: 10_000, maxConnections: 2, nodeId: "n2" },
      silentLogger,
    );
    try {
      expect(small.logSql).toBe(small.sql);
      expect(await small.logDb.get(sql`SELECT current_setting('synchronous_commit') AS s`)).toEqual({ s: "on" });
    } finally {
      await small.close();
    }
  });

  test("both pools busy at once open max_connections connections, no more", async () => {
    const busy = (client: SQL) => Array.from({ length: 8 }, () => client`SELECT pg_sleep(0.4)`);
    // Bun's queries start when awaited.
    const running = Promise.all([...busy(engine.sql), ...busy(engine.logSql)]);
    await Bun.sleep(250);
    const [{ n }] =
      await observer`SELECT count(*)::int AS n FROM pg_stat_activity WHERE datname = current_database() AND pid <> pg_backend_pid() AND query LIKE 'SELECT pg_sleep%'`;
    await running;
    expect(n).toBe(5);
  });
});
