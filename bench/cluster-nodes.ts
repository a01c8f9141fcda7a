// The setups bench:cluster compares (bench/cluster.ts says what it measures): Postroom
// nodes as real `bun src/main.ts serve` processes, each with its own TOML config, data_dir
// and fixed ports in a temp dir, on SQLite or on one PostgreSQL server of the setup's own.
//
// A PostgreSQL setup is made the way docs/operations.md tells an operator to: a server
// (test/helpers/postgres.ts, but with DURABLE_SETTINGS: every commit flushed, as SQLite's
// synchronous=FULL is, where the tests turn durability off), `postroom migrate` once, then
// the nodes, each with `[store] url` and its own `[cluster] node_id`, and every node with the
// first node's data_dir/keys (the keys the database's secrets, DKIM keys among them, are
// sealed with, and links signed with), copied once it has started and made them (a node
// with other keys is refused at start). The sending domain and the inbound address are
// made through the first node before the others start; they find them in the database.
import { cpSync, mkdirSync } from "node:fs";
import { join } from "node:path";
import { DURABLE_SETTINGS, startPostgres, type Postgres } from "../test/helpers/postgres.ts";
import type { TestDnsServer } from "../test/helpers/dns-server.ts";
import { Child, cpuProfileArgs, processTreeCpuMs } from "./child.ts";
import { PG_STATEMENTS_SETTINGS, PgStatements } from "./cluster-pgstats.ts";
import { DeliveryTally } from "./delivery-tally.ts";
import { SENDER_DOMAIN } from "./message.ts";
import { inboundAddress, verifiedSendingDomain, writePostroomConfig } from "./postroom.ts";
import { freePort } from "./smtp-sink.ts";

const ROOT = new URL("..", import.meta.url).pathname;

export const SETUP_KINDS = ["sqlite", "pg1", "pg2"] as const;
export type SetupKind = (typeof SETUP_KINDS)[number];

const SETUPS: Record<SetupKind, { label: string; nodes: number; postgres: boolean }> = {
  sqlite: { label: "1 node, SQLite", nodes: 1, postgres: false },
  pg1: { label: "1 node, PostgreSQL", nodes: 1, postgres: true },
  pg2: { label: "2 nodes, 1 PostgreSQL", nodes: 2, postgres: true },
};

export interface ClusterNode {
  nodeId: string;
  child: Child;
  httpPort: number;
  smtpPort: number;
  tally: DeliveryTally;
}

/** CPU time (ms) so far of a setup's Postroom processes (every node with its threads and children) and of its PostgreSQL server (postmaster and backends; null on SQLite). */
export interface SetupCpu {
  nodes: number;
  perNode: number[];
  postgres: number | null;
}

export interface Setup {
  kind: SetupKind;
  label: string;
  nodes: ClusterNode[];
  postgres: Postgres | null;
  /** pg_stat_statements of its server (--pg-statements), else null. */
  statements: PgStatements | null;
  /** The inbound address, whose mail goes to the target's /KIND path. */
  rcpt: string;
  cpuMs(): SetupCpu;
  stop(): Promise<void>;
}

export interface SetupEnv {
  workDir: string;
  dns: TestDnsServer;
  sinkPort: number;
  /** The target URL this setup's inbound address POSTs to. */
  targetUrl: string;
  /** Track the PostgreSQL server's statements (PgStatements). */
  pgStatements?: boolean;
  /** Run each node under `bun --cpu-prof`, its profile written here when it stops (KIND-NODE.cpuprofile). */
  profileDir?: string | null;
}

/** `postroom migrate` with the config at `configPath`; its output, or an error with everything it printed. */
function migrate(configPath: string): string {
  const run = Bun.spawnSync([process.execPath, "src/main.ts", "migrate", "--config", configPath], {
    cwd: ROOT,
    stdout: "pipe",
    stderr: "pipe",
  });
  const out = `${run.stdout.toString()}${run.stderr.toString()}`.trim();
  if (run.exitCode !== 0) throw new Error(`postroom migrate exited with code ${run.exitCode}:\n${out}`);
  return out;
}

/**
 * Starts the setup `kind` under ENV.workDir/KIND: its PostgreSQL (migrated), its nodes, the
 * verified sending domain and the inbound address. On any failure everything it started
 * is stopped and the error names the setup (a node that exits says why: its log and stderr).
 */
export async function startSetup(kind: SetupKind, env: SetupEnv, log: (line: string) => void): Promise<Setup> {
  const { label, nodes: count, postgres: onPostgres } = SETUPS[kind];
  const dir = join(env.workDir, kind);
  const nodes: ClusterNode[] = [];
  let postgres: Postgres | null = null;
  let rcpt = "";
  let statements: PgStatements | null = null;
  const stop = async () => {
    await statements?.close();
    for (const node of nodes) await node.child.stop();
    await postgres?.stop();
  };
  try {
    if (onPostgres)
      postgres = await startPostgres({ settings: { ...DURABLE_SETTINGS, ...(env.pgStatements ? PG_STATEMENTS_SETTINGS : {}) } });
    for (let i = 1; i <= count; i++) {
      const nodeId = `node-${i}`;
      const nodeDir = join(dir, nodeId);
      mkdirSync(join(nodeDir, "data"), { recursive: true });
      const [httpPort, smtpPort] = [await freePort(), await freePort()];
      const store = postgres ? `[store]\nurl = "${postgres.url}"\n` : "";
      const configPath = writePostroomConfig(nodeDir, env.dns.address, {
        httpListen: `127.0.0.1:${httpPort}`,
        inboundListen: `127.0.0.1:${smtpPort}`,
        inbound: "allow_private_targets = true",
        relay: `smarthost = "smtp://127.0.0.1:${env.sinkPort}"`,
        sections: `${store}[cluster]\nnode_id = "${nodeId}"`,
      });
      if (postgres && i === 1) log(`  ${label}: ${migrate(configPath).replace(/\n/g, "; ")}`);
      // Every node seals and opens the database's secrets with the same keys: node-1's, made at its start.
      if (i > 1) cpSync(join(dir, "node-1", "data", "keys"), join(nodeDir, "data", "keys"), { recursive: true });
      const profile = cpuProfileArgs(env.profileDir ?? null, `${kind}-${nodeId}`);
      const child = Child.spawn(`${label} ${nodeId}`, [...profile, "src/main.ts", "serve", "--config", configPath], ROOT);
      const node: ClusterNode = { nodeId, child, httpPort, smtpPort, tally: null as unknown as DeliveryTally };
      nodes.push(node);
      await child.waitFor((l) => l.msg === "http listening");
      await child.waitFor((l) => l.msg === "inbound smtp listening");
      if (i === 1) {
        await verifiedSendingDomain(httpPort, env.dns, SENDER_DOMAIN);
        rcpt = await inboundAddress(httpPort, env.targetUrl);
      }
      node.tally = new DeliveryTally(child);
      child.ready();
    }
    if (postgres && env.pgStatements) statements = await PgStatements.open(postgres.url);
    const cpuMs = (): SetupCpu => {
      const perNode = nodes.map((n) => processTreeCpuMs(n.child.proc.pid));
      return { nodes: perNode.reduce((a, b) => a + b, 0), perNode, postgres: postgres ? processTreeCpuMs(postgres.pid) : null };
    };
    return { kind, label, nodes, postgres, statements, rcpt, cpuMs, stop };
  } catch (err) {
    await stop().catch(() => undefined);
    throw new Error(`setup "${label}" did not start: ${(err as Error).message}`);
  }
}
