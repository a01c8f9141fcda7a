// A whole appliance in-process (startTestApp) on either store engine: SQLite in its data
// dir, or a throwaway PostgreSQL (startPostgres) migrated as `postroom migrate` does, named
// by [store] url. A test that must hold on both engines runs its cases over ENGINE_NAMES.
import { SQL } from "bun";
import { migratePostgres } from "../../src/store/postgres-migrate.ts";
import { parsePostgresUrl } from "../../src/config/store-url.ts";
import { startTestApp, type TestApp, type TestAppOptions } from "./app.ts";
import { startPostgres } from "./postgres.ts";

export const ENGINE_NAMES = ["SQLite", "PostgreSQL"] as const;
export type EngineName = (typeof ENGINE_NAMES)[number];

/** `sql`: a connection of the test's own to the appliance's PostgreSQL (null on SQLite). */
export type EngineApp = TestApp & { sql: SQL | null };

export async function startTestAppOn(engine: EngineName, opts: TestAppOptions = {}): Promise<EngineApp> {
  if (engine === "SQLite") return { ...(await startTestApp(opts)), sql: null };
  const pg = await startPostgres();
  try {
    await migratePostgres(parsePostgresUrl(pg.url)!, { connectTimeoutMs: 10_000 });
    // After the caller's top-level keys: [store] opens a table.
    const app = await startTestApp({ ...opts, extra: `${opts.extra ?? ""}\n[store]\nurl = "${pg.url}"\n` });
    const sql = new SQL(pg.url, { max: 1 });
    return {
      ...app,
      sql,
      async stop() {
        await app.stop();
        await sql.close();
        await pg.stop();
      },
    };
  } catch (err) {
    await pg.stop();
    throw err;
  }
}
