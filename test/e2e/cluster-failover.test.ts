// Failover with the DEFAULT lease settings (outbound.lease_time, webhooks.lease_time and
// cluster.job_lease_time left out of the config): two nodes of the built binary on one
// PostgreSQL, fixed ports, `postroom migrate` run once. A burst of API sends goes through
// node A while the remote MX answers slowly (so A holds recipients it has not finished);
// A is killed (-9) mid-burst. Every send that got a 202 is delivered, and the recipients A
// had leased are delivered by node B within 60 s of the kill: A's leases, no longer renewed
// by its heartbeat, end at most outbound.lease_time (30 s) after its last renewal. A holds
// the retention purge's job lease too (it started first; the purge runs every 2 s here):
// that lease ends within cluster.job_lease_time of the kill, and B takes the job over.
// Then, A restarted: one attempt slower than the lease (the MX holds its answer 40 s)
// keeps its recipient on the node making it, renewed past the lease's first end, and
// when that node is killed the other takes the recipient over one lease time after the
// last renewal, not after the attempt's start.
import { afterAll, beforeAll, describe, expect } from "bun:test";
import { SQL } from "bun";
import { join } from "node:path";
import { builtBinary } from "../helpers/binary.ts";
import { deliveredId, makeClusterKeys, nodeApi, nodeDataDir, nodeSend } from "../helpers/cluster-node.ts";
import { TestDnsServer } from "../helpers/dns-server.ts";
import { ACCOUNT_A, testConfigToml } from "../helpers/fixtures.ts";
import { freePort } from "../helpers/pebble.ts";
import { postgresAvailable, startPostgres, type Postgres } from "../helpers/postgres.ts";
import { runCli, ServeProcess } from "../helpers/process.ts";
import { publishRecords, SENDING_KEYS } from "../helpers/sending-domain.ts";
import { eventually, routeToSink, SmtpSink } from "../helpers/sink.ts";
import { tempDir } from "../helpers/tmp.ts";
import { requireTools } from "../helpers/tools.ts";

const it = requireTools("postgresql");
const A = `/api/v0.1/${ACCOUNT_A.id}`;
/** What the failover must take at most with the default settings (docs/operations.md). */
const FAILOVER_LIMIT_MS = 60_000;
/** The defaults this test relies on, for its messages (the config leaves them out). */
const DEFAULT_LEASE_MS = 30_000;
const DOMAINS = ["one.example.org", "two.example.org", "three.example.org", "four.example.org"];
const SENDS = 160;

interface Node {
  name: string;
  config: string;
  http: number;
  proc: ServeProcess;
}

describe("failover between two nodes on one PostgreSQL, default lease settings", () => {
  const dir = tempDir();
  let pg: Postgres;
  let sql: SQL;
  let dns: TestDnsServer;
  let sink: SmtpSink;
  const nodes: Node[] = [];

  const api = (node: Node, path: string, method = "GET", body?: unknown) => nodeApi(node.http, path, method, body);
  const send = (node: Node, to: string, subject: string) => nodeSend(node.http, to, subject);

  async function writeNode(name: string): Promise<Node> {
    const dataDir = nodeDataDir(dir.path, name);
    const http = await freePort();
    const config = join(dir.path, `${name}.toml`);
    // No lease_time, no job_lease_time: the defaults.
    const toml = testConfigToml({
      dataDir,
      dnsServer: dns.address,
      accounts: [ACCOUNT_A],
      outbound: `${SENDING_KEYS}\nmx_port = ${sink.port}\nallow_private_mx = true`,
      extra: `[store]\nurl = "${pg.url}"\nmax_connections = 8\n[cluster]\nnode_id = "${name}"\n[retention]\ninterval = "2s"`,
    })
      .replace('listen = "127.0.0.1:0"', `listen = "127.0.0.1:${http}"`)
      .replace('level = "warn"', 'level = "info"');
    expect(toml).not.toContain("lease_time");
    await Bun.write(config, toml);
    return { name, config, http, proc: null as unknown as ServeProcess };
  }

  async function start(node: Node): Promise<void> {
    node.proc = ServeProcess.spawn(node.config, dir.path, [builtBinary()]);
    await node.proc.waitFor((l) => l.msg === "postroom started", 30_000);
  }

  beforeAll(async () => {
    if (!postgresAvailable()) return;
    pg = await startPostgres();
    sql = new SQL(pg.url, { max: 2 });
    dns = await TestDnsServer.start();
    routeToSink(dns, ...DOMAINS);
    sink = await SmtpSink.start();
    makeClusterKeys(dir.path);
    nodes.push(await writeNode("node-a"), await writeNode("node-b"));
    const migrated = runCli(["migrate", "--config", nodes[0]!.config]);
    expect(migrated.stderr).toBe("");
    expect(migrated.code).toBe(0);
    // Node A first: it takes the retention purge's lease, and keeps it (its heartbeat) once B runs.
    await start(nodes[0]!);
    await eventually(
      async () => (await sql`SELECT holder FROM job_leases WHERE name = 'retention-purge'`)[0]?.holder === "node-a",
      20_000,
      "node A holding the purge",
    );
    await start(nodes[1]!);
    const domain = (await (await api(nodes[0]!, `${A}/sending_domains`, "POST", { domain: "sender.test" })).json()) as {
      id: string;
      dns_records: { type: string; host: string; value: string }[];
    };
    publishRecords(dns, domain);
    expect((await api(nodes[1]!, `${A}/sending_domains/${domain.id}/verify`, "POST")).status).toBe(200);
  }, 120_000);

  afterAll(async () => {
    for (const n of nodes) {
      n.proc?.signal("SIGTERM");
      await n.proc?.exited();
    }
    await sql?.close();
    await pg?.stop();
    await sink?.stop();
    await dns?.stop();
    dir.remove();
  }, 60_000);

  it("kill -9 of the node delivering: node B delivers the recipients it had leased within 60 s, and every acknowledged send", async () => {
    const a = nodes[0]!;
    // A destination that works hard: each message's answer takes 400 ms, so node A holds
    // claimed recipients waiting their turn on its connections when it is killed.
    sink.dataDelayMs = 400;
    const acknowledged = new Set<string>();
    let refused = 0;
    let killedAtMs = 0;
    let heldAtKill: string[] = [];
    let jobLeasesAtKill: { name: string; expires_at: string }[] = [];
    const sendOne = async (i: number) => {
      try {
        const res = await send(a, `burst${i}@${DOMAINS[i % DOMAINS.length]}`, `burst ${i}`);
        if (res.status === 202) acknowledged.add(((await res.json()) as { id: string }).id);
        else refused++;
      } catch {
        refused++; // the connection died with the node: no 202, no promise made
      }
      if (!killedAtMs && acknowledged.size >= SENDS / 2) {
        const [held] = await sql`SELECT COUNT(*)::int AS n FROM outbound_recipients WHERE state = 'queued' AND locked_by LIKE 'node-a/%'`;
        if (killedAtMs || held.n === 0) return;
        killedAtMs = Date.now();
        a.proc.signal("SIGKILL");
        const rows: { id: string }[] = await sql`SELECT id FROM outbound_recipients WHERE state = 'queued' AND locked_by LIKE 'node-a/%'`;
        heldAtKill = rows.map((r) => r.id);
        jobLeasesAtKill = await sql`SELECT name, expires_at::text AS expires_at FROM job_leases WHERE holder = 'node-a'`;
      }
    };
    await Promise.all(
      Array.from({ length: 8 }, (_, w) =>
        (async () => {
          for (let i = 0; i < SENDS / 8; i++) await sendOne(w * (SENDS / 8) + i);
        })(),
      ),
    );
    expect(killedAtMs).toBeGreaterThan(0);
    expect(await a.proc.exited()).not.toBe(0);
    expect(heldAtKill.length).toBeGreaterThan(0);

    // Takeover: no recipient is held by node A any more (node B claimed them once A's leases ended)...
    let takenOverMs = 0;
    await eventually(
      async () => {
        const [row] = await sql`SELECT COUNT(*)::int AS n FROM outbound_recipients WHERE state = 'queued' AND locked_by LIKE 'node-a/%'`;
        if (row.n > 0) return false;
        takenOverMs = Date.now() - killedAtMs;
        return true;
      },
      FAILOVER_LIMIT_MS + 10_000,
      "node A's leases taken over",
    );
    // ...and every recipient A held at the kill is delivered (by B: A is dead).
    let heldDeliveredMs = 0;
    await eventually(
      async () => {
        const [row] =
          await sql`SELECT COUNT(*)::int AS n FROM outbound_recipients WHERE id IN ${sql(heldAtKill)} AND NOT (state = 'done' AND status = 'delivery')`;
        if (row.n > 0) return false;
        heldDeliveredMs = Date.now() - killedAtMs;
        return true;
      },
      FAILOVER_LIMIT_MS + 10_000,
      "the recipients node A held delivered",
    );
    const delivered = () => new Set(sink.messages.map((m) => deliveredId(m.mailFrom)));
    await eventually(() => [...acknowledged].every((id) => delivered().has(id)), 60_000, "every acknowledged message delivered");
    const copies = new Map<string, number>();
    for (const m of sink.messages)
      if (acknowledged.has(deliveredId(m.mailFrom))) copies.set(deliveredId(m.mailFrom), (copies.get(deliveredId(m.mailFrom)) ?? 0) + 1);
    const duplicates = [...copies.values()].filter((n) => n > 1).length;
    const jobLeaseEndsMs = jobLeasesAtKill.map((j) => Number(j.expires_at) - killedAtMs);
    let purgeTakenOverMs = 0;
    await eventually(
      async () => {
        if ((await sql`SELECT holder FROM job_leases WHERE name = 'retention-purge'`)[0]?.holder !== "node-b") return false;
        purgeTakenOverMs = Date.now() - killedAtMs;
        return true;
      },
      FAILOVER_LIMIT_MS,
      "node B holding the purge",
    );
    console.info(
      `cluster failover (defaults): ${acknowledged.size} acknowledged (202), ${refused} not acknowledged, ${heldAtKill.length} recipients leased by node-a at the kill, ` +
        `taken over ${takenOverMs} ms after it, all of them delivered ${heldDeliveredMs} ms after it, ${duplicates} delivered twice; ` +
        `node-a's job leases (${jobLeasesAtKill.map((j) => j.name).join(", ") || "none"}) ended ${jobLeaseEndsMs.join(", ")} ms after the kill; node-b took the retention purge over ${purgeTakenOverMs} ms after it`,
    );
    expect([...acknowledged].filter((id) => !delivered().has(id))).toEqual([]);
    expect(heldDeliveredMs).toBeLessThan(FAILOVER_LIMIT_MS);
    // A's leases were last renewed at most a third of the lease before the kill.
    expect(takenOverMs).toBeGreaterThan((2 / 3) * DEFAULT_LEASE_MS - 1_000);
    expect(jobLeasesAtKill.map((j) => j.name)).toContain("retention-purge");
    for (const endMs of jobLeaseEndsMs) expect(endMs).toBeLessThanOrEqual(DEFAULT_LEASE_MS);
    expect(purgeTakenOverMs).toBeLessThan(FAILOVER_LIMIT_MS);
  }, 240_000);

  it("an attempt slower than the lease keeps its recipient on its node; killed, the other node takes it over one lease time after the last renewal", async () => {
    // Node A again (killed above): it frees what its earlier process held, and delivers.
    await start(nodes[0]!);
    sink.dataDelayMs = 40_000;
    const res = await send(nodes[0]!, "slow@one.example.org", "slow answer");
    expect(res.status).toBe(202);
    const { id } = (await res.json()) as { id: string };
    const lease = async () =>
      (await sql`SELECT locked_by, state FROM outbound_recipients WHERE message_id = ${id}`)[0] as {
        locked_by: string | null;
        state: string;
      };
    const holder = (await eventually(async () => (await lease()).locked_by ?? undefined, 10_000, "the recipient claimed")).split("/")[0]!;
    await eventually(() => sink.attempts.get("slow@one.example.org") === 1, 10_000, "the attempt under way");
    const attemptStartedMs = Date.now();
    // Past the lease's first end: the holder's heartbeat renewed it, no other node took it.
    await Bun.sleep(DEFAULT_LEASE_MS + 5_000);
    expect(sink.attempts.get("slow@one.example.org")).toBe(1);
    expect((await lease()).locked_by).toStartWith(`${holder}/`);
    const [{ until }] = await sql`SELECT locked_until::text AS until FROM outbound_recipients WHERE message_id = ${id}`;
    const renewedUntilMs = Number(until);
    expect(renewedUntilMs).toBeGreaterThan(attemptStartedMs + DEFAULT_LEASE_MS);
    // The node making the attempt dies; the MX answers the next attempt at once.
    const victim = nodes.find((n) => n.name === holder)!;
    const killedAtMs = Date.now();
    victim.proc.signal("SIGKILL");
    await victim.proc.exited();
    sink.dataDelayMs = 0;
    let doneMs = 0;
    await eventually(
      async () => {
        if ((await lease()).state !== "done") return false;
        doneMs = Date.now() - killedAtMs;
        return true;
      },
      FAILOVER_LIMIT_MS,
      "the slow recipient delivered by the other node",
    );
    console.info(
      `cluster failover (defaults), slow attempt: held by ${holder} for ${killedAtMs - attemptStartedMs} ms (lease renewed until ${renewedUntilMs - killedAtMs} ms after the kill), ` +
        `delivered by the other node ${doneMs} ms after the kill; ${sink.attempts.get("slow@one.example.org")} attempts in all`,
    );
    expect(sink.attempts.get("slow@one.example.org")).toBe(2);
    // Taken over when the renewed lease ended (plus the other node's look), not before.
    expect(doneMs).toBeGreaterThanOrEqual(renewedUntilMs - killedAtMs);
    expect(doneMs).toBeLessThan(DEFAULT_LEASE_MS + 5_000);
  }, 180_000);
});
