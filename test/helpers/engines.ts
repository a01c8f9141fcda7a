// Both store engines for a repository's contract test: a SQLite store in a temp data dir
// and a throwaway PostgreSQL (startPostgres) with the postgres migration history applied.
// A contract test runs the same cases on each with describe.each(STORE_ENGINES) and builds
// its repository from whichever handle it got; `clear(tables)` empties the tables between
// cases. PostgreSQL cases are skipped, visibly, where it is not installed (a failure in CI).
import { SQL } from "bun";
import { test } from "bun:test";
import { POSTGRES_MIGRATIONS } from "../../src/store/migrations/postgres/index.ts";
import { openStore, type Store } from "../../src/store/store.ts";
import type { Db } from "../../src/store/db/db.ts";
import { pgDb } from "../../src/store/db/pg-db.ts";
import { guardNul } from "../../src/store/pg-nul-guard.ts";
import { postgresAvailable, startPostgres } from "./postgres.ts";
import { tempDir } from "./tmp.ts";
import { requireTools } from "./tools.ts";

/** An open engine: exactly one of `store` (SQLite) and `sql` (PostgreSQL). */
export type EngineHandle = (
  | { kind: "sqlite"; store: Store; sql?: undefined }
  | { kind: "postgres"; sql: SQL; url: string; store?: undefined }
) & {
  /** The engine as the engine-neutral repositories take it (src/store/db/db.ts). */
  db: Db;
  /** The Db for the cheaper durable path (SQLite's second connection; the same pool on PostgreSQL). */
  logDb: Db;
  /** Deletes every row of these tables (children first). */
  clear(tables: readonly string[]): Promise<void>;
  close(): Promise<void>;
};

export interface StoreEngine {
  name: string;
  /** `test`, or the visible skip (a failure in CI) where the engine is missing. */
  test: (name: string, fn: () => Promise<unknown>, timeoutMs?: number) => void;
  available(): boolean;
  open(): Promise<EngineHandle>;
}

const quoted = (table: string): string => {
  if (!/^[a-z_][a-z0-9_]*$/.test(table)) throw new Error(`not a table name: ${table}`);
  return `"${table}"`;
};

export const STORE_ENGINES: StoreEngine[] = [
  {
    name: "SQLite",
    test,
    available: () => true,
    async open() {
      const dir = tempDir();
      const store = openStore(dir.path);
      return {
        kind: "sqlite",
        store,
        db: store.main,
        logDb: store.log,
        clear: async (tables) => {
          for (const t of tables) store.db.run(`DELETE FROM ${quoted(t)}`);
        },
        close: async () => {
          store.close();
          dir.remove();
        },
      };
    },
  },
  {
    name: "PostgreSQL",
    test: requireTools("postgresql"),
    available: postgresAvailable,
    open: () => openPostgres(null),
  },
];

/**
 * PostgreSQL whose database sorts text and folds its case by a language (ICU, en-US), as a
 * cluster made with a distribution's defaults (en_US.UTF-8) does. The test cluster is
 * locale C, which compares bytes as SQLite does, so it cannot show a repository that
 * forgot COLLATE "C" where it orders IDs or lowers text for a search; a contract test
 * about lists and searches adds this engine to STORE_ENGINES.
 */
export const POSTGRES_LINGUISTIC: StoreEngine = {
  name: "PostgreSQL (ICU en-US collation)",
  test: requireTools("postgresql"),
  available: postgresAvailable,
  open: () => openPostgres("en-US"),
};

async function openPostgres(icuLocale: string | null): Promise<EngineHandle> {
  const pg = await startPostgres();
  let url = pg.url;
  if (icuLocale) {
    const admin = new SQL(pg.url, { max: 1 });
    await admin.unsafe(
      `CREATE DATABASE postroom_icu TEMPLATE template0 ENCODING 'UTF8' LOCALE 'C' LOCALE_PROVIDER icu ICU_LOCALE '${icuLocale.replace(/[^A-Za-z-]/g, "")}'`,
    );
    await admin.close();
    url = pg.url.replace(/\/postroom$/, "/postroom_icu");
  }
  // As the appliance opens it: a NUL bound for the database fails here, naming the value.
  const sql = guardNul(new SQL(url, { max: 2 }));
  for (const m of POSTGRES_MIGRATIONS) await sql.begin((tx) => tx.unsafe(m.sql));
  const db = pgDb(sql);
  return {
    kind: "postgres",
    sql,
    db,
    logDb: db,
    /** For a test's own clients (its own pool, e.g. many connections racing). */
    url,
    clear: async (tables) => {
      for (const t of tables) await sql.unsafe(`DELETE FROM ${quoted(t)}`);
    },
    close: async () => {
      await sql.close();
      await pg.stop();
    },
  };
}
