// A whole in-process appliance (startTestApp) on either store engine, for API tests whose
// repositories changed: SQLite in its data dir, or a throwaway PostgreSQL with the postgres
// schema brought up to date as `postroom migrate` does it named by [store] url. A test file
// runs its cases on both with describe.each(APP_ENGINES); the PostgreSQL cases are skipped,
// visibly, where it is not installed (a failure in CI).
import { test } from "bun:test";
import { migratePostgres } from "../../src/store/postgres-migrate.ts";
import { parsePostgresUrl } from "../../src/config/store-url.ts";
import { startTestApp, type TestApp, type TestAppOptions } from "./app.ts";
import { postgresAvailable, startPostgres } from "./postgres.ts";
import { requireTools } from "./tools.ts";

export interface AppEngine {
  name: string;
  test: (name: string, fn: () => Promise<unknown>, timeoutMs?: number) => void;
  available(): boolean;
  /** startTestApp on this engine; stop() also stops the engine's server. */
  start(opts: TestAppOptions): Promise<TestApp>;
}

export const APP_ENGINES: AppEngine[] = [
  { name: "SQLite", test, available: () => true, start: (opts) => startTestApp(opts) },
  {
    name: "PostgreSQL",
    test: requireTools("postgresql"),
    available: postgresAvailable,
    async start(opts) {
      const pg = await startPostgres();
      try {
        await migratePostgres(parsePostgresUrl(pg.url)!, { connectTimeoutMs: 10_000 });
        const t = await startTestApp({ ...opts, extra: `${opts.extra ?? ""}\n[store]\nurl = "${pg.url}"` });
        return {
          ...t,
          async stop() {
            await t.stop();
            await pg.stop();
          },
        };
      } catch (err) {
        await pg.stop();
        throw err;
      }
    },
  },
];
