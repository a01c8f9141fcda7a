// The two migration histories, SQLite's (src/store/migrations) and PostgreSQL's
// (src/store/migrations/postgres), make the same schema: a fresh SQLite store and a fresh
// PostgreSQL with every postgres migration applied have the same tables, columns (type
// family, nullability, default), primary keys, foreign keys, unique constraints and
// indexes (name, uniqueness, columns, partial predicate). The only difference allowed is
// PostgreSQL's explicit rowid column (and its <table>_rowid index), which every table whose
// rowid the code uses must have, since PostgreSQL has no rowid of its own.
import { afterAll, beforeAll, describe, expect } from "bun:test";
import { readdirSync, readFileSync, statSync } from "node:fs";
import { join } from "node:path";
import { SQL } from "bun";
import type { Database } from "bun:sqlite";
import { MIGRATIONS } from "../../src/store/migrations/index.ts";
import { POSTGRES_MIGRATIONS } from "../../src/store/migrations/postgres/index.ts";
import { openStore, type Store } from "../../src/store/store.ts";
import { postgresAvailable, startPostgres, type Postgres } from "../helpers/postgres.ts";
import { tempDir } from "../helpers/tmp.ts";
import { requireTools } from "../helpers/tools.ts";

const pgTest = requireTools("postgresql");

interface Column {
  type: "integer" | "text" | "blob" | "real";
  notNull: boolean;
  default: string | null;
}
interface Index {
  unique: boolean;
  columns: string;
  /** The WHERE of a partial index, normalized (lower case, no parentheses or casts); null if not partial. */
  where: string | null;
}
interface Table {
  columns: Record<string, Column>;
  primaryKey: string;
  foreignKeys: string[];
  uniqueConstraints: string[];
  indexes: Record<string, Index>;
}
type Schema = Record<string, Table>;

/** Tables the migration runner keeps for itself, not part of either history. */
const RUNNER_TABLES = new Set(["schema_migrations"]);

const sortedRecord = <T>(entries: [string, T][]): Record<string, T> => Object.fromEntries(entries.sort(([a], [b]) => a.localeCompare(b)));
const normalizeExpr = (sql: string): string =>
  sql
    .replace(/::[a-z ]+/gi, "")
    .replace(/[()]/g, "")
    .replace(/\s+/g, " ")
    .trim()
    .toLowerCase();
const normalizeDefault = (value: string | null): string | null => (value === null ? null : normalizeExpr(value));

function typeFamily(declared: string): Column["type"] {
  const t = declared.toLowerCase();
  if (t === "integer" || t === "bigint") return "integer";
  if (t === "text") return "text";
  if (t === "blob" || t === "bytea") return "blob";
  if (t === "real" || t === "double precision") return "real";
  throw new Error(`a column type the parity test does not know: ${declared}`);
}

function sqliteSchema(db: Database): { schema: Schema; rowidTables: Set<string> } {
  const tables = db
    .query("SELECT name, wr FROM pragma_table_list WHERE schema = 'main' AND type = 'table' AND name NOT LIKE 'sqlite_%'")
    .all() as { name: string; wr: number }[];
  const schema: Schema = {};
  const rowidTables = new Set<string>();
  for (const { name, wr } of tables) {
    if (RUNNER_TABLES.has(name)) continue;
    if (!wr) rowidTables.add(name);
    const info = db.query(`SELECT name, type, "notnull", dflt_value, pk FROM pragma_table_info(?)`).all(name) as {
      name: string;
      type: string;
      notnull: number;
      dflt_value: string | null;
      pk: number;
    }[];
    const indexes = db.query('SELECT name, "unique", origin, partial FROM pragma_index_list(?)').all(name) as {
      name: string;
      unique: number;
      origin: string;
      partial: number;
    }[];
    const indexColumns = (index: string) =>
      (db.query("SELECT name FROM pragma_index_info(?) ORDER BY seqno").all(index) as { name: string }[]).map((c) => c.name).join(",");
    const fks = db.query('SELECT "table", "from", "to" FROM pragma_foreign_key_list(?)').all(name) as {
      table: string;
      from: string;
      to: string;
    }[];
    const where = (index: string): string => {
      const { sql } = db.query("SELECT sql FROM sqlite_schema WHERE type = 'index' AND name = ?").get(index) as { sql: string };
      return normalizeExpr(sql.slice(sql.search(/\bWHERE\b/i) + "WHERE".length));
    };
    schema[name] = {
      // SQLite lets a non-INTEGER primary key hold NULL (a legacy quirk); Postroom never
      // writes one, and PostgreSQL's primary keys are NOT NULL, so a key column counts as NOT NULL.
      columns: sortedRecord(
        info.map((c) => [
          c.name,
          { type: typeFamily(c.type), notNull: c.notnull === 1 || c.pk > 0, default: normalizeDefault(c.dflt_value) },
        ]),
      ),
      primaryKey: info
        .filter((c) => c.pk > 0)
        .sort((a, b) => a.pk - b.pk)
        .map((c) => c.name)
        .join(","),
      foreignKeys: fks.map((fk) => `${fk.from} -> ${fk.table}.${fk.to}`).sort(),
      uniqueConstraints: indexes
        .filter((i) => i.origin === "u")
        .map((i) => indexColumns(i.name))
        .sort(),
      indexes: sortedRecord(
        indexes
          .filter((i) => i.origin === "c")
          .map((i) => [i.name, { unique: i.unique === 1, columns: indexColumns(i.name), where: i.partial ? where(i.name) : null }]),
      ),
    };
  }
  return { schema: sortedRecord(Object.entries(schema)), rowidTables };
}

interface PgColumnRow {
  table_name: string;
  column_name: string;
  data_type: string;
  is_nullable: string;
  column_default: string | null;
  is_identity: string;
}
interface PgIndexRow {
  table_name: string;
  index_name: string;
  unique: boolean;
  primary: boolean;
  constraint_type: string | null;
  columns: string;
  predicate: string | null;
}

/** PostgreSQL's schema in the same shape, and each table's rowid column with its index (taken out of the schema). */
async function postgresSchema(
  sql: SQL,
): Promise<{ schema: Schema; rowids: Record<string, { column: Column & { identity: boolean }; index: Index | undefined }> }> {
  const columns: PgColumnRow[] = await sql`
    SELECT table_name, column_name, data_type, is_nullable, column_default, is_identity
    FROM information_schema.columns WHERE table_schema = 'public' ORDER BY table_name, column_name`;
  const indexes: PgIndexRow[] = await sql`
    SELECT t.relname AS table_name, i.relname AS index_name, x.indisunique AS unique, x.indisprimary AS primary, c.contype AS constraint_type,
      (SELECT string_agg(a.attname, ',' ORDER BY k.n) FROM unnest(x.indkey::int2[]) WITH ORDINALITY k(attnum, n)
        JOIN pg_attribute a ON a.attrelid = t.oid AND a.attnum = k.attnum) AS columns,
      pg_get_expr(x.indpred, x.indrelid) AS predicate
    FROM pg_index x JOIN pg_class i ON i.oid = x.indexrelid JOIN pg_class t ON t.oid = x.indrelid
    JOIN pg_namespace ns ON ns.oid = t.relnamespace LEFT JOIN pg_constraint c ON c.conindid = x.indexrelid AND c.contype IN ('p', 'u')
    WHERE ns.nspname = 'public'`;
  const fks: { table_name: string; from: string; ref: string; to: string }[] = await sql`
    SELECT cl.relname AS table_name, a.attname AS "from", rt.relname AS ref, ra.attname AS "to"
    FROM pg_constraint c JOIN pg_class cl ON cl.oid = c.conrelid JOIN pg_class rt ON rt.oid = c.confrelid
    JOIN pg_namespace ns ON ns.oid = cl.relnamespace
    JOIN pg_attribute a ON a.attrelid = c.conrelid AND a.attnum = c.conkey[1]
    JOIN pg_attribute ra ON ra.attrelid = c.confrelid AND ra.attnum = c.confkey[1]
    WHERE c.contype = 'f' AND ns.nspname = 'public'`;

  const schema: Schema = {};
  const rowids: Record<string, { column: Column & { identity: boolean }; index: Index | undefined }> = {};
  const table = (name: string): Table =>
    (schema[name] ??= { columns: {}, primaryKey: "", foreignKeys: [], uniqueConstraints: [], indexes: {} });
  for (const c of columns) {
    const column = { type: typeFamily(c.data_type), notNull: c.is_nullable === "NO", default: normalizeDefault(c.column_default) };
    if (c.column_name === "rowid") rowids[c.table_name] = { column: { ...column, identity: c.is_identity === "YES" }, index: undefined };
    else table(c.table_name).columns[c.column_name] = column;
  }
  for (const i of indexes) {
    const index = { unique: i.unique, columns: i.columns, where: i.predicate === null ? null : normalizeExpr(i.predicate) };
    if (i.primary) table(i.table_name).primaryKey = i.columns;
    else if (i.constraint_type === "u") table(i.table_name).uniqueConstraints.push(i.columns);
    else if (i.index_name === `${i.table_name}_rowid` && rowids[i.table_name]) rowids[i.table_name]!.index = index;
    else table(i.table_name).indexes[i.index_name] = index;
  }
  for (const fk of fks) table(fk.table_name).foreignKeys.push(`${fk.from} -> ${fk.ref}.${fk.to}`);
  for (const t of Object.values(schema)) {
    t.columns = sortedRecord(Object.entries(t.columns));
    t.indexes = sortedRecord(Object.entries(t.indexes));
    t.foreignKeys.sort();
    t.uniqueConstraints.sort();
  }
  return { schema: sortedRecord(Object.entries(schema)), rowids };
}

/** Tables whose rowid the source's SQL uses (the retention purge's windows): every line that says rowid, and the tables it names. */
function tablesUsingRowid(tableNames: Set<string>): Set<string> {
  const found = new Set<string>();
  const walk = (dir: string): void => {
    for (const entry of readdirSync(dir)) {
      const path = join(dir, entry);
      if (statSync(path).isDirectory()) walk(path);
      else if (path.endsWith(".ts")) {
        for (const line of readFileSync(path, "utf8").split("\n")) {
          if (!/\browid\b/.test(line)) continue;
          for (const m of line.matchAll(/\b(?:FROM|JOIN|UPDATE|INTO)\s+(\w+)/gi)) if (tableNames.has(m[1]!)) found.add(m[1]!);
        }
      }
    }
  };
  walk(join(import.meta.dir, "../../src"));
  return found;
}

describe("schema parity: SQLite and PostgreSQL histories", () => {
  let pg: Postgres | undefined;
  let sql: SQL | undefined;
  const sqliteDir = tempDir();
  let store: Store | undefined;
  let sqlite: ReturnType<typeof sqliteSchema>;

  beforeAll(async () => {
    if (!postgresAvailable()) return;
    store = openStore(sqliteDir.path);
    sqlite = sqliteSchema(store.db);
    pg = await startPostgres();
    sql = new SQL(pg.url, { max: 1 });
    for (const m of POSTGRES_MIGRATIONS) await sql.begin((tx) => tx.unsafe(m.sql));
  }, 60_000);

  afterAll(async () => {
    store?.close();
    sqliteDir.remove();
    await sql?.close();
    await pg?.stop();
  });

  pgTest("both histories have the same versions with the same names", () => {
    expect(POSTGRES_MIGRATIONS.map((m) => [m.version, m.name])).toEqual(MIGRATIONS.map((m) => [m.version, m.name]));
  });

  pgTest("tables, columns (type, NOT NULL, default), keys, unique constraints and indexes are the same", async () => {
    const { schema } = await postgresSchema(sql!);
    expect(Object.keys(schema)).toEqual(Object.keys(sqlite.schema));
    for (const name of Object.keys(sqlite.schema))
      expect({ table: name, ...schema[name] }).toEqual({ table: name, ...sqlite.schema[name]! });
  });

  pgTest(
    "every table whose rowid the code uses has a PostgreSQL rowid: BIGINT identity, NOT NULL, uniquely indexed as <table>_rowid",
    async () => {
      const { rowids } = await postgresSchema(sql!);
      const needed = tablesUsingRowid(new Set(Object.keys(sqlite.schema)));
      expect(needed.size).toBeGreaterThan(0);
      for (const name of needed)
        expect({ table: name, rowid: rowids[name] }).toEqual({
          table: name,
          rowid: {
            column: { type: "integer", notNull: true, default: null, identity: true },
            index: { unique: true, columns: "rowid", where: null },
          },
        });
      // A PostgreSQL rowid stands in for SQLite's, so the SQLite table must have one (not WITHOUT ROWID).
      for (const name of Object.keys(rowids))
        expect({ table: name, sqliteHasRowid: sqlite.rowidTables.has(name) }).toEqual({ table: name, sqliteHasRowid: true });
    },
  );

  pgTest("PostgreSQL runs as an unprivileged user, which owns its data directory", async () => {
    const [row] = (await sql!`SELECT pg_backend_pid() AS backend, current_setting('data_directory') AS "dataDir"`) as {
      backend: number;
      dataDir: string;
    }[];
    const { backend, dataDir } = row!;
    const uidOf = (pid: number) => Number(/^Uid:\s+(\d+)/m.exec(readFileSync(`/proc/${pid}/status`, "utf8"))![1]);
    expect(uidOf(pg!.pid)).not.toBe(0);
    expect(uidOf(backend)).toBe(uidOf(pg!.pid));
    expect(statSync(dataDir).uid).toBe(uidOf(pg!.pid));
  });
});
