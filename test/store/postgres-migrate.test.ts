// The decision `postroom migrate` makes on PostgreSQL before it touches anything: given
// the rows of schema_migrations and this build's history, which migrations to apply, or
// why the database is refused; and, on a real PostgreSQL, a migration whose SQL fails.
// (The command's runs: test/e2e/migrate.test.ts.)
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { SQL } from "bun";
import type { Migration } from "../../src/store/migrations/index.ts";
import {
  migratePostgres,
  MigrationFailedError,
  planMigrations,
  type MigrationPlan,
  type RecordedMigration,
} from "../../src/store/postgres-migrate.ts";
import { parsePostgresUrl } from "../../src/config/store-url.ts";
import { postgresAvailable, startPostgres, type Postgres } from "../helpers/postgres.ts";
import { requireTools } from "../helpers/tools.ts";

const m = (version: number, name: string): Migration => ({ version, name, sql: `-- ${name}` });
const BUILD = [m(1, "initial"), m(2, "add_x"), m(3, "add_y")];
const rows = (...r: [number, string][]): RecordedMigration[] => r.map(([version, name]) => ({ version, name }));

describe("planMigrations", () => {
  const cases: [string, RecordedMigration[], readonly Migration[], MigrationPlan | RegExp][] = [
    ["an empty database: everything, in order", [], BUILD, { kind: "apply", version: 0, pending: BUILD }],
    ["part way: the rest", rows([1, "initial"]), BUILD, { kind: "apply", version: 1, pending: [BUILD[1]!, BUILD[2]!] }],
    ["up to date: nothing", rows([1, "initial"], [2, "add_x"], [3, "add_y"]), BUILD, { kind: "apply", version: 3, pending: [] }],
    ["rows in any order", rows([2, "add_x"], [1, "initial"]), BUILD, { kind: "apply", version: 2, pending: [BUILD[2]!] }],
    ["an empty build and an empty database: nothing", [], [], { kind: "apply", version: 0, pending: [] }],
    [
      "newer than the build: refused",
      rows([1, "initial"], [2, "add_x"], [3, "add_y"], [4, "add_z"]),
      BUILD,
      /^the database is at schema version 4, but this postroom only knows versions up to 3: it was migrated by a newer postroom/,
    ],
    [
      "newer, with a build one version old",
      rows([1, "initial"], [2, "add_x"]),
      [BUILD[0]!],
      /^the database is at schema version 2, but this postroom only knows versions up to 1/,
    ],
    [
      "a recorded name another build gave: refused",
      rows([1, "initial"], [2, "add_w"]),
      BUILD,
      /^the database records migration 2 as "add_w", but this postroom's migration 2 is "add_x": it was migrated by a different build/,
    ],
    [
      "the first migration renamed: refused",
      rows([1, "init"]),
      BUILD,
      /^the database records migration 1 as "init", but this postroom's migration 1 is "initial"/,
    ],
    [
      "a version the build skips: refused",
      rows([1, "initial"], [2, "add_x"]),
      [BUILD[0]!, BUILD[2]!],
      /^the database records migration 2 as "add_x", but this postroom's migration 2 is missing/,
    ],
    [
      "a gap in the records: refused",
      rows([1, "initial"], [3, "add_y"]),
      BUILD,
      /^the database is at schema version 3 but has no record of migration 2 "add_x"/,
    ],
  ];
  for (const [name, recorded, build, expected] of cases) {
    test(name, () => {
      const plan = planMigrations(recorded, build);
      if (expected instanceof RegExp) {
        expect(plan.kind).toBe("refuse");
        expect(plan.kind === "refuse" ? plan.reason : "").toMatch(expected);
      } else expect(plan).toEqual(expected);
    });
  }
});

const pgTest = requireTools("postgresql");

describe("migratePostgres on a real PostgreSQL", () => {
  let pg: Postgres | undefined;
  let sql: SQL | undefined;
  beforeAll(async () => {
    if (!postgresAvailable()) return;
    pg = await startPostgres();
    sql = new SQL(pg.url, { max: 1 });
  }, 60_000);
  afterAll(async () => {
    await sql?.close();
    await pg?.stop();
  });

  pgTest("a migration whose SQL fails is rolled back whole; the ones before it stay applied and recorded", async () => {
    const history = [
      { version: 1, name: "good", sql: "CREATE TABLE kept (id TEXT PRIMARY KEY)" },
      { version: 2, name: "broken", sql: "CREATE TABLE half (id TEXT); SELECT no_such_function()" },
    ];
    const run = migratePostgres(parsePostgresUrl(pg!.url)!, { connectTimeoutMs: 5_000, migrations: history });
    await expect(run).rejects.toThrow(MigrationFailedError);
    await expect(run).rejects.toThrow(/^migration 2 "broken" failed and was rolled back: function no_such_function\(\) does not exist/);
    const tables = await sql!`SELECT table_name FROM information_schema.tables WHERE table_schema = 'public' ORDER BY table_name`;
    expect(tables.map((t: { table_name: string }) => t.table_name)).toEqual(["kept", "schema_migrations"]);
    expect((await sql!`SELECT version, name FROM schema_migrations`).map((r: object) => ({ ...r }))).toEqual([
      { version: 1, name: "good" },
    ]);
    // Fixed, it goes on from where it stopped.
    const fixed = await migratePostgres(parsePostgresUrl(pg!.url)!, {
      connectTimeoutMs: 5_000,
      migrations: [history[0]!, { ...history[1]!, sql: "CREATE TABLE half (id TEXT)" }],
    });
    expect({ applied: fixed.applied.map((m) => m.name), version: fixed.version }).toEqual({ applied: ["broken"], version: 2 });
  });
});
