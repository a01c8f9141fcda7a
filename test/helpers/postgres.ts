// Debian's PostgreSQL, started for one test file: a throwaway cluster (initdb) in a temp
// dir, a server on a free loopback port with its unix socket in that dir, and one database.
// PostgreSQL refuses to run as root, and tests run as root in CI, so as root the cluster
// belongs to the `postgres` user the Debian package creates (`nobody` without it) and
// every command runs as that user through setpriv, which execs in place: the process we
// keep is the server itself, and stop() signals it directly. Durability is off (fsync,
// full_page_writes): a test's data is thrown away with its dir.
import { chownSync, existsSync, readdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll } from "bun:test";
import { SQL } from "bun";
import { parsePostgresUrl } from "../../src/config/store-url.ts";
import { migratePostgres } from "../../src/store/postgres-migrate.ts";
import { freePort } from "./pebble.ts";
import { tempDir } from "./tmp.ts";

export interface Postgres {
  /** postgres://postgres[:PASSWORD]@127.0.0.1:PORT/postroom: the test's database, as its superuser. */
  url: string;
  /** The server's process id (the postmaster). */
  pid: number;
  /** Stops the server (fast shutdown) and removes its directory. */
  stop(): Promise<void>;
  /** Stops the server and keeps its data, for `restart` (an outage): fast shutdown, or immediate (as a crash: sockets cut, no goodbye). */
  halt(mode?: "fast" | "immediate"): Promise<void>;
  /** Starts a halted server again on the same port and data; resolves once it takes logins. */
  restart(): Promise<void>;
}

const DEBIAN_ROOT = "/usr/lib/postgresql";
const DATABASE = "postroom";
const START_TIMEOUT_MS = 30_000;

/** The newest Debian PostgreSQL's bin directory (/usr/lib/postgresql/<version>/bin), or null. */
export function postgresBinDir(): string | null {
  if (!existsSync(DEBIAN_ROOT)) return null;
  const versions = readdirSync(DEBIAN_ROOT)
    .filter((v) => existsSync(join(DEBIAN_ROOT, v, "bin", "postgres")))
    .sort((a, b) => Number(b) - Number(a));
  return versions[0] ? join(DEBIAN_ROOT, versions[0], "bin") : null;
}

/** Whether Debian's postgresql is installed; CI installs it, and there a missing one is a failure. */
export function postgresAvailable(): boolean {
  const found = postgresBinDir() !== null;
  if (!found && process.env.CI === "true") throw new Error("postgresql is required in CI (.ci/run installs it)");
  return found;
}

/** The unprivileged user the server runs as when the tests run as root. */
function serverUser(): { name: string; uid: number; gid: number } {
  for (const name of ["postgres", "nobody"]) {
    const id = Bun.spawnSync(["id", "-u", name]);
    const gid = Bun.spawnSync(["id", "-g", name]);
    if (id.exitCode === 0 && gid.exitCode === 0) return { name, uid: Number(id.stdout.toString()), gid: Number(gid.stdout.toString()) };
  }
  throw new Error("no postgres or nobody user to run PostgreSQL as (it refuses to run as root)");
}

/** What a production server has and tests turn off: every commit flushed to disk (bench:cluster compares it with SQLite's synchronous=FULL), PostgreSQL's default buffers and connections (several nodes' pools). */
export const DURABLE_SETTINGS: Record<string, string> = {
  fsync: "on",
  full_page_writes: "on",
  synchronous_commit: "on",
  shared_buffers: "128MB",
  max_connections: "100",
};

/**
 * `password`: TCP logins (the url's) need it, checked with scram-sha-256, as a production
 * server does; without it every login is trusted. `settings` replace the tests' server
 * settings (DURABLE_SETTINGS for a benchmark).
 */
export async function startPostgres(opts: { password?: string; settings?: Record<string, string> } = {}): Promise<Postgres> {
  const bin = postgresBinDir();
  if (!bin) throw new Error("Debian's postgresql is not installed (.ci/run installs it)");
  const dir = tempDir("postroom-pg-");
  const dataDir = join(dir.path, "data");
  const user = process.getuid?.() === 0 ? serverUser() : null;
  let asUser: string[] = [];
  if (user) {
    chownSync(dir.path, user.uid, user.gid);
    asUser = ["setpriv", `--reuid=${user.uid}`, `--regid=${user.gid}`, "--clear-groups", "--inh-caps=-all"];
  }
  const run = (cmd: string[]) => Bun.spawnSync([...asUser, ...cmd], { cwd: dir.path, stderr: "pipe", stdout: "pipe" });

  let auth = ["--auth=trust"];
  if (opts.password !== undefined) {
    const pwfile = join(dir.path, "pwfile");
    writeFileSync(pwfile, opts.password);
    if (user) chownSync(pwfile, user.uid, user.gid);
    auth = ["--auth-local=trust", "--auth-host=scram-sha-256", `--pwfile=${pwfile}`];
  }
  const init = run([
    join(bin, "initdb"),
    "-D",
    dataDir,
    "-U",
    "postgres",
    ...auth,
    "--encoding=UTF8",
    "--locale=C",
    "--no-sync",
    "--no-instructions",
  ]);
  if (init.exitCode !== 0) {
    dir.remove();
    throw new Error(`initdb failed: ${init.stderr.toString()}`);
  }

  const port = await freePort();
  const settings = {
    listen_addresses: "127.0.0.1",
    port: String(port),
    unix_socket_directories: dir.path,
    fsync: "off",
    full_page_writes: "off",
    synchronous_commit: "off",
    shared_buffers: "16MB",
    max_connections: "50",
    logging_collector: "off",
    ...opts.settings,
  };
  const args = Object.entries(settings).flatMap(([key, value]) => ["-c", `${key}=${value}`]);
  let server = Bun.spawn([...asUser, join(bin, "postgres"), "-D", dataDir, ...args], { cwd: dir.path, stdout: "ignore", stderr: "pipe" });
  let log = new Response(server.stderr).text();

  const halt = async (mode: "fast" | "immediate" = "fast") => {
    if (server.exitCode === null) {
      // fast: ends sessions ("terminating connection due to administrator command"), no
      // checkpoint wait for clients; immediate: every process quits at once, recovery at restart.
      server.kill(mode === "fast" ? "SIGINT" : "SIGQUIT");
      const exited = await Promise.race([server.exited.then(() => true), Bun.sleep(10_000).then(() => false)]);
      if (!exited) server.kill("SIGKILL");
      await server.exited;
    }
  };
  const stop = async () => {
    await halt();
    dir.remove();
  };

  const login = opts.password === undefined ? "postgres" : `postgres:${encodeURIComponent(opts.password)}`;
  const admin = `postgres://${login}@127.0.0.1:${port}/postgres`;
  /** Runs `first` on the admin database until the server takes it (or START_TIMEOUT_MS passes). */
  const untilUp = async (first: (sql: SQL) => Promise<unknown>) => {
    const deadline = Date.now() + START_TIMEOUT_MS;
    for (;;) {
      const sql = new SQL(admin, { max: 1, connectionTimeout: 1 });
      try {
        await first(sql);
        await sql.close();
        return;
      } catch (err) {
        await sql.close().catch(() => {});
        // An earlier try that timed out on our side may have created it after all.
        if ((err as { errno?: string }).errno === "42P04") return;
        if (server.exitCode !== null || Date.now() > deadline) {
          await stop();
          throw new Error(`PostgreSQL did not start (${String(err)}): ${await log}`);
        }
        await Bun.sleep(50);
      }
    }
  };
  await untilUp((sql) => sql.unsafe(`CREATE DATABASE ${DATABASE}`));
  const restart = async () => {
    if (server.exitCode === null) return;
    server = Bun.spawn([...asUser, join(bin, "postgres"), "-D", dataDir, ...args], { cwd: dir.path, stdout: "ignore", stderr: "pipe" });
    log = new Response(server.stderr).text();
    await untilUp((sql) => sql`SELECT 1`);
  };
  return {
    url: `postgres://${login}@127.0.0.1:${port}/${DATABASE}`,
    get pid() {
      return server.pid;
    },
    stop,
    halt,
    restart,
  };
}

/** A throwaway server at this build's schema, as `postroom migrate` leaves one: what a node on PostgreSQL opens. */
export async function startMigratedPostgres(opts: { settings?: Record<string, string> } = {}): Promise<Postgres> {
  const pg = await startPostgres(opts);
  await migratePostgres(parsePostgresUrl(pg.url)!, { connectTimeoutMs: 10_000 });
  return pg;
}

/**
 * A PostgreSQL of the test file's own with one scratch table made by `ddl`: started before
 * the file's tests (when PostgreSQL is installed) and stopped after them. `sql()` is the
 * client (4 connections).
 */
export function scratchPostgres(ddl: string): { sql: () => SQL } {
  let pg: Postgres | undefined;
  let sql: SQL | undefined;
  beforeAll(async () => {
    if (!postgresAvailable()) return;
    pg = await startPostgres();
    sql = new SQL(pg.url, { max: 4 });
    await sql.unsafe(ddl);
  }, 60_000);
  afterAll(async () => {
    await sql?.close();
    await pg?.stop();
  });
  return { sql: () => sql! };
}
