// `postroom migrate` as an operator runs it: on the embedded SQLite, and on a real
// PostgreSQL (Debian's, a throwaway cluster that checks passwords as a production server
// does). Every run is the real command in a child process.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { Database } from "bun:sqlite";
import { join } from "node:path";
import { SQL } from "bun";
import { MIGRATIONS } from "../../src/store/migrations/index.ts";
import { POSTGRES_MIGRATIONS } from "../../src/store/migrations/postgres/index.ts";
import { MIGRATION_LOCK_KEY } from "../../src/store/postgres-migrate.ts";
import { acmeWithoutCa } from "../helpers/acme-offline.ts";
import { testConfigToml } from "../helpers/fixtures.ts";
import { freePort } from "../helpers/pebble.ts";
import { postgresAvailable, startPostgres, type Postgres } from "../helpers/postgres.ts";
import { runCli, ServeProcess } from "../helpers/process.ts";
import { tempDir } from "../helpers/tmp.ts";
import { requireTools } from "../helpers/tools.ts";

const MAIN = new URL("../../src/main.ts", import.meta.url).pathname;
const PASSWORD = "s3cret-Pw+/9";
const dir = tempDir();
afterAll(() => dir.remove());
/** What a run on an empty store prints it applied, e.g. "0001 initial, 0002 job_leases". */
const ALL_APPLIED = MIGRATIONS.map((m) => `${String(m.version).padStart(4, "0")} ${m.name}`).join(", ");
const LATEST = MIGRATIONS.at(-1)!.version;
const FUTURE = LATEST + 1;

let configs = 0;
/** A config file whose store.url is `url` ("" = SQLite in a fresh data_dir). */
async function configFor(url: string, dataDir = join(dir.path, `data-${++configs}`), connectTimeout = "5s"): Promise<string> {
  const path = join(dir.path, `migrate-${++configs}.toml`);
  await Bun.write(path, testConfigToml({ dataDir, extra: `[store]\nurl = "${url}"\nconnect_timeout = "${connectTimeout}"` }));
  return path;
}

describe("postroom migrate on SQLite", () => {
  test("a fresh data_dir: applies the migrations and prints the version; a second run applies nothing", async () => {
    const config = await configFor("");
    const first = runCli(["migrate", "--config", config]);
    expect(first.stderr).toBe("");
    expect(first.code).toBe(0);
    expect(first.stdout).toMatch(/^SQLite at \S+postroom\.db: applied /);
    expect(first.stdout).toEndWith(`: applied ${ALL_APPLIED}\nschema version ${LATEST} (the latest this postroom knows: ${LATEST})\n`);
    const second = runCli(["migrate", "--config", config]);
    expect(second.code).toBe(0);
    expect(second.stdout).toEndWith(
      `: up to date, nothing to apply\nschema version ${LATEST} (the latest this postroom knows: ${LATEST})\n`,
    );
  });

  test("a database a newer postroom migrated is refused with exit 1", async () => {
    const dataDir = join(dir.path, "sqlite-newer");
    const config = await configFor("", dataDir);
    expect(runCli(["migrate", "--config", config]).code).toBe(0);
    const db = new Database(join(dataDir, "postroom.db"));
    db.run(`INSERT INTO schema_migrations (version, name, applied_at) VALUES (${FUTURE}, 'from_the_future', 0)`);
    db.close();
    const r = runCli(["migrate", "--config", config]);
    expect(r.code).toBe(1);
    expect(r.stderr).toContain(
      `refused: the database is at schema version ${FUTURE}, but this postroom only knows versions up to ${LATEST}`,
    );
  });
});

const pgTest = requireTools("postgresql");

describe("postroom migrate on PostgreSQL", () => {
  let pg: Postgres | undefined;
  let admin: SQL | undefined;
  /** A new, empty database on the server: its URL, and a client on it. */
  const databases: SQL[] = [];
  async function freshDatabase(name: string): Promise<{ url: string; sql: SQL }> {
    await admin!.unsafe(`CREATE DATABASE ${name}`);
    const url = pg!.url.replace(/\/postroom$/, `/${name}`);
    const sql = new SQL(url, { max: 2 });
    databases.push(sql);
    return { url, sql };
  }

  beforeAll(async () => {
    if (!postgresAvailable()) return;
    pg = await startPostgres({ password: PASSWORD });
    admin = new SQL(pg.url, { max: 1 });
  }, 60_000);

  afterAll(async () => {
    for (const sql of databases) await sql.close();
    await admin?.close();
    await pg?.stop();
  });

  pgTest("an empty database: migrate creates the schema and records each version; a second run applies nothing", async () => {
    const { url, sql } = await freshDatabase("fresh");
    const config = await configFor(url);
    const first = runCli(["migrate", "--config", config]);
    expect(first.stderr).toBe("");
    expect(first.code).toBe(0);
    const port = new URL(url).port;
    expect(first.stdout).toBe(
      `PostgreSQL at 127.0.0.1:${port}, database fresh as user postgres: applied ${ALL_APPLIED}\nschema version ${LATEST} (the latest this postroom knows: ${LATEST})\n`,
    );

    const columns: { table_name: string; column_name: string; data_type: string }[] = await sql`
      SELECT table_name, column_name, data_type FROM information_schema.columns
      WHERE table_schema = 'public' AND (table_name, column_name) IN (('addresses', 'target'), ('outbound_messages', 'rowid'), ('outbound_messages', 'created_at'))
      ORDER BY table_name, column_name`;
    expect(columns.map((c) => ({ ...c }))).toEqual([
      { table_name: "addresses", column_name: "target", data_type: "text" },
      { table_name: "outbound_messages", column_name: "created_at", data_type: "bigint" },
      { table_name: "outbound_messages", column_name: "rowid", data_type: "bigint" },
    ]);
    const recorded = await sql`SELECT version, name FROM schema_migrations ORDER BY version`;
    expect(recorded.map((r: object) => ({ ...r }))).toEqual(POSTGRES_MIGRATIONS.map((m) => ({ version: m.version, name: m.name })));

    const second = runCli(["migrate", "--config", config]);
    expect(second.code).toBe(0);
    expect(second.stdout).toBe(
      `PostgreSQL at 127.0.0.1:${port}, database fresh as user postgres: up to date, nothing to apply\nschema version ${LATEST} (the latest this postroom knows: ${LATEST})\n`,
    );
    expect((await sql`SELECT count(*)::int AS n FROM schema_migrations`)[0].n).toBe(POSTGRES_MIGRATIONS.length);
  });

  pgTest(
    "two migrate runs at once (two processes, both waiting on the lock): both exit 0, one applies, each version is recorded once",
    async () => {
      const { url, sql } = await freshDatabase("race");
      const config = await configFor(url);
      const waiting = async () =>
        (
          await sql`SELECT count(*)::int AS n FROM pg_locks WHERE locktype = 'advisory' AND NOT granted AND database = (SELECT oid FROM pg_database WHERE datname = 'race')`
        )[0].n as number;
      // The test holds the migration lock while both start, so both are surely waiting for it
      // when it lets go: the two really run at the same moment, whatever the machine's speed.
      const runs = await sql.begin(async (tx) => {
        await tx.unsafe(`SELECT pg_advisory_xact_lock(${MIGRATION_LOCK_KEY})`);
        const procs = [0, 1].map(() =>
          Bun.spawn([process.execPath, MAIN, "migrate", "--config", config], { stdout: "pipe", stderr: "pipe" }),
        );
        const deadline = Date.now() + 30_000;
        while ((await waiting()) < 2) {
          if (Date.now() > deadline) throw new Error("the two migrate runs did not both wait for the migration lock");
          await Bun.sleep(20);
        }
        return procs;
      });
      const results = await Promise.all(
        runs.map(async (p) => ({
          code: await p.exited,
          stdout: await new Response(p.stdout).text(),
          stderr: await new Response(p.stderr).text(),
        })),
      );
      expect(results.map((r) => [r.code, r.stderr])).toEqual([
        [0, ""],
        [0, ""],
      ]);
      // Each migration is its own locked transaction, so the two runs may share the work:
      // together they applied each migration once.
      const appliedByEither = results.flatMap((r) => {
        const what = /: (applied (.*)|up to date, nothing to apply)\n/.exec(r.stdout)!;
        return what[2] ? what[2].split(", ") : [];
      });
      expect(appliedByEither.sort()).toEqual(ALL_APPLIED.split(", "));
      const recorded = await sql`SELECT version, count(*)::int AS n FROM schema_migrations GROUP BY version ORDER BY version`;
      expect(recorded.map((r: object) => ({ ...r }))).toEqual(POSTGRES_MIGRATIONS.map((m) => ({ version: m.version, n: 1 })));
    },
    60_000,
  );

  pgTest(
    "a database at a version newer than this build, or with another build's migration names, is refused with exit 1 and left as it was",
    async () => {
      const { url, sql } = await freshDatabase("newer");
      const config = await configFor(url);
      expect(runCli(["migrate", "--config", config]).code).toBe(0);
      await sql`INSERT INTO schema_migrations (version, name, applied_at) VALUES (${FUTURE}, 'from_the_future', 0)`;
      const newer = runCli(["migrate", "--config", config]);
      expect(newer.code).toBe(1);
      expect(newer.stdout).toBe("");
      expect(newer.stderr).toBe(
        `PostgreSQL at 127.0.0.1:${new URL(url).port}, database newer as user postgres: refused: the database is at schema version ${FUTURE}, but this postroom only knows versions up to ${LATEST}: it was migrated by a newer postroom. Run that version (or newer), or restore a backup taken before the upgrade.\n`,
      );

      await sql`DELETE FROM schema_migrations WHERE version = ${FUTURE}`;
      await sql`UPDATE schema_migrations SET name = 'another_initial' WHERE version = 1`;
      const renamed = runCli(["migrate", "--config", config]);
      expect(renamed.code).toBe(1);
      expect(renamed.stderr).toContain(
        `refused: the database records migration 1 as "another_initial", but this postroom's migration 1 is "initial"`,
      );
      expect((await sql`SELECT name FROM schema_migrations ORDER BY version`).map((r: { name: string }) => r.name)).toEqual([
        "another_initial",
        ...POSTGRES_MIGRATIONS.slice(1).map((m) => m.name),
      ]);
    },
  );

  pgTest(
    "a wrong password, or a port nothing listens on: one line naming host:port and the reason, never the password; exit 1",
    async () => {
      const port = new URL(pg!.url).port;
      const wrong = runCli([
        "migrate",
        "--config",
        await configFor(`postgres://postgres:${encodeURIComponent(`Wrong-${PASSWORD}`)}@127.0.0.1:${port}/postroom`),
      ]);
      expect(wrong.code).toBe(1);
      expect(wrong.stdout).toBe("");
      expect(wrong.stderr).toBe(
        `cannot connect to PostgreSQL at 127.0.0.1:${port}, database postroom as user postgres: password authentication failed for user "postgres"\n`,
      );

      const closed = await freePort();
      const refused = runCli([
        "migrate",
        "--config",
        await configFor(`postgresql://postgres:${encodeURIComponent(PASSWORD)}@127.0.0.1:${closed}/postroom`),
      ]);
      expect(refused.code).toBe(1);
      expect(refused.stderr).toBe(
        `cannot connect to PostgreSQL at 127.0.0.1:${closed}, database postroom as user postgres: connection refused\n`,
      );
      for (const r of [wrong, refused]) {
        expect(r.stderr).not.toContain(PASSWORD);
        expect(r.stderr).not.toContain(encodeURIComponent(PASSWORD));
      }
    },
  );

  pgTest(
    "serve, and tls status beside it, on a wrong password or a port nothing listens on: the same one line naming host:port and the reason, never the password",
    async () => {
      const port = new URL(pg!.url).port;
      const closed = await freePort();
      const cases = [
        {
          url: `postgres://postgres:${encodeURIComponent(`Wrong-${PASSWORD}`)}@127.0.0.1:${port}/postroom`,
          reason: `127.0.0.1:${port}, database postroom as user postgres: password authentication failed for user "postgres"`,
        },
        {
          url: `postgresql://postgres:${encodeURIComponent(PASSWORD)}@127.0.0.1:${closed}/postroom`,
          reason: `127.0.0.1:${closed}, database postroom as user postgres: connection refused`,
        },
      ];
      for (const { url, reason } of cases) {
        const config = join(dir.path, `unreachable-${++configs}.toml`);
        await Bun.write(
          config,
          testConfigToml({
            dataDir: join(dir.path, `data-${++configs}`),
            extra: `[store]\nurl = "${url}"\nconnect_timeout = "5s"`,
            tls: acmeWithoutCa("mx.postroom.test", "1h"),
          }),
        );
        const serve = runCli(["serve", "--config", config]);
        expect(serve.code).toBe(2);
        const failed = serve.stdout.split("\n").filter((l) => l.includes("postroom failed to start"));
        expect(failed).toHaveLength(1);
        expect(JSON.parse(failed[0]!).err.message).toBe(`cannot connect to PostgreSQL at ${reason}`);
        const status = runCli(["tls", "status", "--config", config]);
        expect(status.code).toBe(1);
        expect(status.stdout).toBe(`problem: cannot connect to PostgreSQL at ${reason}\n`);
        for (const out of [serve.stdout, serve.stderr, status.stdout, status.stderr]) {
          expect(out).not.toContain(PASSWORD);
          expect(out).not.toContain(encodeURIComponent(PASSWORD));
        }
      }
    },
  );

  pgTest("a second node whose data_dir/keys are not the first node's is refused, naming the key files", async () => {
    const { url } = await freshDatabase("two_nodes");
    const first = await configFor(url);
    expect(runCli(["migrate", "--config", first]).code).toBe(0);
    await Bun.write(first, (await Bun.file(first).text()).replace('level = "warn"', 'level = "info"'));
    const node = ServeProcess.spawn(first);
    await node.waitFor((l) => l.msg === "postroom started", 30_000);
    node.signal("SIGTERM");
    expect(await node.exited()).toBe(0);
    // Another node with a data_dir of its own: it makes keys of its own, which the database does not know.
    const second = runCli(["serve", "--config", await configFor(url)]);
    expect(second.code).toBe(2);
    const failed = second.stdout.split("\n").filter((l) => l.includes("postroom failed to start"));
    expect(failed).toHaveLength(1);
    const message = JSON.parse(failed[0]!).err.message as string;
    for (const key of ["url-signing", "dkim", "tracking", "secrets"]) expect(message).toContain(`data_dir/keys/${key}.key`);
    expect(message).toContain("copy data_dir/keys from the first node");
  });

  pgTest("a user PostgreSQL does not let create tables: its reason on one line, exit 2, nothing recorded", async () => {
    const { url, sql } = await freshDatabase("locked");
    await admin!.unsafe(`CREATE ROLE reader LOGIN PASSWORD '${PASSWORD}'`);
    await sql.unsafe("REVOKE CREATE ON SCHEMA public FROM PUBLIC");
    const asReader = url.replace(/\/\/postgres:[^@]*@/, `//reader:${encodeURIComponent(PASSWORD)}@`);
    const r = runCli(["migrate", "--config", await configFor(asReader)]);
    expect(r.code).toBe(2);
    expect(r.stdout).toBe("");
    expect(r.stderr).toBe(
      `PostgreSQL at 127.0.0.1:${new URL(url).port}, database locked as user reader: permission denied for schema public\n`,
    );
    expect((await sql`SELECT count(*)::int AS n FROM information_schema.tables WHERE table_schema = 'public'`)[0].n).toBe(0);
  });

  test("a server that accepts the connection and never answers: the same one line after store.connect_timeout; exit 1", async () => {
    const silent = Bun.listen({ hostname: "127.0.0.1", port: 0, socket: { data() {} } });
    try {
      const r = runCli([
        "migrate",
        "--config",
        await configFor(`postgres://postroom:${encodeURIComponent(PASSWORD)}@127.0.0.1:${silent.port}/postroom`, undefined, "1s"),
      ]);
      expect(r.code).toBe(1);
      expect(r.stderr).toBe(
        `cannot connect to PostgreSQL at 127.0.0.1:${silent.port}, database postroom as user postroom: no answer within 1 s (store.connect_timeout)\n`,
      );
    } finally {
      silent.stop(true);
    }
  });

  pgTest(
    "serve refuses a database not at its schema, naming `postroom migrate`; after migrate it serves; check-config accepts the url without a warning",
    async () => {
      const { url } = await freshDatabase("unmigrated");
      const config = await configFor(url);
      const refused = runCli(["serve", "--config", config]);
      expect(refused.code).toBe(2);
      const failed = refused.stdout.split("\n").filter((l) => l.includes("postroom failed to start"));
      expect(failed).toHaveLength(1);
      expect(failed[0]).toContain("is at schema version 0 and this postroom needs version");
      expect(failed[0]).toContain("run `postroom migrate` with this config first");
      expect(refused.stdout + refused.stderr).not.toContain(PASSWORD);

      expect(runCli(["migrate", "--config", config]).code).toBe(0);
      await Bun.write(config, (await Bun.file(config).text()).replace('level = "warn"', 'level = "info"'));
      const serving = ServeProcess.spawn(config);
      const port = await serving.httpPort();
      const health = await fetch(`http://127.0.0.1:${port}/healthz`);
      expect(health.status).toBe(200);
      expect(((await health.json()) as { checks: Record<string, string> }).checks.store).toBe("ok");
      serving.signal("SIGTERM");
      expect(await serving.exited()).toBe(0);

      const check = runCli(["check-config", "--config", config]);
      expect(check.code).toBe(0);
      expect(check.stderr).not.toContain("warning: store.url");
      expect(check.stderr + check.stdout).not.toContain(PASSWORD);
    },
  );
});
