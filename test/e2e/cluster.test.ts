// Two nodes on one PostgreSQL, as an operator runs them: the built binary twice, each with
// its own data_dir (the same keys copied into both), node B as an unprivileged user, fixed ports, `postroom migrate` run
// once before. Mail in through either node reaches the target, API sends through either
// are delivered once, an address made on one node takes mail on the other at once, rate
// limits count across the nodes, jobs that run once per cluster run once per period, and
// when one node is killed (-9) in a burst of sends the other delivers every message that
// got a 202 once the dead node's leases ran out (outbound.lease_time).
import { afterAll, beforeAll, describe, expect } from "bun:test";
import { SQL } from "bun";
import { chmodSync, chownSync, readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { acmeWithoutCa } from "../helpers/acme-offline.ts";
import { builtBinary } from "../helpers/binary.ts";
import { deliveredId, makeClusterKeys, nodeApi, nodeDataDir, nodeSend } from "../helpers/cluster-node.ts";
import { TestDnsServer } from "../helpers/dns-server.ts";
import { ACCOUNT_A, ACCOUNT_B, testConfigToml } from "../helpers/fixtures.ts";
import { hashSecret } from "../../src/auth/secrets.ts";
import { secretBox } from "../../src/lib/secret-key.ts";
import { HEALTH_STALE_AFTER_MS } from "../../src/store/engine/pg-health.ts";
import { createTlsStateRepo } from "../../src/tls/tls-store.repo.ts";
import { pgDb } from "../../src/store/db/pg-db.ts";
import { TlsStore } from "../../src/tls/tls-store.port.ts";
import { makeSelfSignedCert } from "../helpers/certs.ts";
import { scrapeMetrics } from "../helpers/metrics.ts";
import { freePort } from "../helpers/pebble.ts";
import { postgresAvailable, startPostgres, type Postgres } from "../helpers/postgres.ts";
import { runCli, ServeProcess } from "../helpers/process.ts";
import { publishRecords, SENDING_KEYS } from "../helpers/sending-domain.ts";
import { eventually, routeToSink, SmtpSink } from "../helpers/sink.ts";
import { sendWithNodemailer } from "../helpers/smtp.ts";
import { TestTarget } from "../helpers/target.ts";
import { tempDir } from "../helpers/tmp.ts";
import { requireTools } from "../helpers/tools.ts";

const it = requireTools("postgresql");
const LEASE_S = 3;
const CERT_CHECK_S = 2;
const A = `/api/v0.1/${ACCOUNT_A.id}`;
const METRICS_TOKEN = "pr_metrics_token_for_tests";

interface Node {
  name: string;
  /** How the node's command starts: as an unprivileged user (setpriv) for the node that runs as one. */
  runAs: string[];
  config: string;
  http: number;
  smtp: number;
  proc: ServeProcess;
}

describe("two nodes on one PostgreSQL", () => {
  const dir = tempDir();
  let pg: Postgres;
  let sql: SQL;
  let dns: TestDnsServer;
  let sink: SmtpSink;
  let target: TestTarget;
  const nodes: Node[] = [];

  const api = (node: Node, path: string, method = "GET", body?: unknown, token = ACCOUNT_A.token) =>
    nodeApi(node.http, path, method, body, token);
  const send = (node: Node, to: string, subject: string) => nodeSend(node.http, to, subject);
  const metric = async (node: Node, name: string, labels: Record<string, string>) =>
    (await scrapeMetrics(node.http, METRICS_TOKEN)).value(name, labels) ?? 0;

  async function writeNode(name: string, unprivileged = false): Promise<Node> {
    // The same keys on every node (docs/operations.md): copied, as an operator does.
    const dataDir = nodeDataDir(dir.path, name);
    let runAs: string[] = [];
    // As root (CI), this node runs as nobody, as a service does, owning its data_dir only.
    if (unprivileged && process.getuid?.() === 0) {
      const nobody = {
        uid: Number(Bun.spawnSync(["id", "-u", "nobody"]).stdout.toString()),
        gid: Number(Bun.spawnSync(["id", "-g", "nobody"]).stdout.toString()),
      };
      chmodSync(dir.path, 0o711);
      for (const path of [dataDir, join(dataDir, "keys"), ...readdirSync(join(dataDir, "keys")).map((f) => join(dataDir, "keys", f))])
        chownSync(path, nobody.uid, nobody.gid);
      runAs = ["setpriv", `--reuid=${nobody.uid}`, `--regid=${nobody.gid}`, "--clear-groups", "--inh-caps=-all"];
    }
    const [http, smtp] = [await freePort(), await freePort()];
    const config = join(dir.path, `${name}.toml`);
    const toml = testConfigToml({
      dataDir,
      dnsServer: dns.address,
      inbound: true,
      http: `metrics_token = "${hashSecret(METRICS_TOKEN)}"`,
      accounts: [ACCOUNT_A, { ...ACCOUNT_B, rateLimit: "10/min" }],
      outbound: `${SENDING_KEYS}\nmx_port = ${sink.port}\nallow_private_mx = true\nlease_time = "${LEASE_S}s"`,
      tls: acmeWithoutCa("mx.postroom.test", `${CERT_CHECK_S}s`),
      extra: `[store]\nurl = "${pg.url}"\nmax_connections = 8\n[cluster]\nnode_id = "${name}"`,
    })
      .replace('listen = "127.0.0.1:0"', `listen = "127.0.0.1:${http}"`)
      .replace('inbound_listen = "127.0.0.1:0"', `inbound_listen = "127.0.0.1:${smtp}"`)
      .replace('level = "warn"', 'level = "info"');
    await Bun.write(config, toml);
    return { name, runAs, config, http, smtp, proc: null as unknown as ServeProcess };
  }

  async function start(node: Node): Promise<void> {
    node.proc = ServeProcess.spawn(node.config, dir.path, [...node.runAs, builtBinary()]);
    await node.proc.waitFor((l) => l.msg === "postroom started", 30_000);
    // setpriv execs in place: the process is the node itself, under the uid it was given.
    if (node.runAs.length > 0)
      expect(readFileSync(`/proc/${node.proc.proc.pid}/status`, "utf8")).toMatch(
        new RegExp(`^Uid:\\s+${node.runAs[1]!.slice("--reuid=".length)}\\s`, "m"),
      );
  }

  beforeAll(async () => {
    if (!postgresAvailable()) return;
    pg = await startPostgres();
    sql = new SQL(pg.url, { max: 2 });
    dns = await TestDnsServer.start();
    routeToSink(dns, "example.org");
    sink = await SmtpSink.start();
    target = TestTarget.start();
    // The four keys, made before the first start and copied to each node (docs/operations.md).
    makeClusterKeys(dir.path);
    nodes.push(await writeNode("node-a"), await writeNode("node-b", true));
    // Once, from one node, before any node starts (docs/operations.md).
    const migrated = runCli(["migrate", "--config", nodes[0]!.config]);
    expect(migrated.stderr).toBe("");
    expect(migrated.code).toBe(0);
    // A certificate in the store, not yet due for renewal (as an earlier order left it): each
    // certificate check is then a quick look, one per tls.check_interval, never an order.
    const { certFile, keyFile } = makeSelfSignedCert(dir.path, "mx.postroom.test", "cluster", 90);
    const secrets = secretBox(() => readFileSync(join(dir.path, "keys", "secrets.key")));
    await new TlsStore(createTlsStateRepo(pgDb(sql)), secrets, Date.now).saveCertificate({
      cert: readFileSync(certFile, "utf8"),
      key: readFileSync(keyFile, "utf8"),
    });
    await Promise.all(nodes.map(start));
    // The sender's domain, added and verified on node A the way a customer does it.
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
    await pg?.stop(); // already stopped by the last test when it ran
    await sink?.stop();
    await dns?.stop();
    await target?.stop();
    dir.remove();
  }, 60_000);

  it("an address made on one node takes mail on the other at once; a change of its target and its deletion are seen there within a second", async () => {
    const [a, b] = [nodes[0]!, nodes[1]!];
    const created = await api(a, `${A}/addresses`, "POST", { target: target.url("/first"), target_format: "json+n" });
    expect(created.status).toBe(201);
    const address = (await created.json()) as { id: string; email: string };
    const firstSent = await sendWithNodemailer(b.smtp, { from: "bob@sender.test", to: address.email, subject: "to node b", text: "x" });
    expect(firstSent.code).toBe(250);
    expect(target.at("/first").map((m) => m.json.headers.subject)).toEqual(["to node b"]);

    // Node B routed to it once, so B's cache holds it: a change on A must reach B's cache.
    expect((await api(a, `${A}/addresses/${address.id}`, "PATCH", { target: target.url("/second") })).status).toBe(200);
    const changedAtMs = Date.now();
    await eventually(
      async () =>
        (await sendWithNodemailer(b.smtp, { from: "bob@sender.test", to: address.email, subject: "after the change", text: "x" })).code ===
          250 && target.at("/second").length > 0,
      5_000,
      "mail through node B to the new target",
    );
    expect(Date.now() - changedAtMs).toBeLessThan(1_000);

    expect((await api(a, `${A}/addresses/${address.id}`, "DELETE")).status).toBe(202);
    const deletedAtMs = Date.now();
    await eventually(
      async () =>
        (await sendWithNodemailer(b.smtp, { from: "bob@sender.test", to: address.email, subject: "after the deletion", text: "x" }))
          .code === 550,
      5_000,
      "node B refusing the deleted address",
    );
    expect(Date.now() - deletedAtMs).toBeLessThan(1_000);
  }, 30_000);

  it("mail to either node reaches the target, and either node lists both incoming statuses", async () => {
    const created = (await (
      await api(nodes[0]!, `${A}/addresses`, "POST", { target: target.url("/either"), target_format: "json+n" })
    ).json()) as { id: string; email: string };
    for (const node of nodes) {
      const sent = await sendWithNodemailer(node.smtp, {
        from: "carol@sender.test",
        to: created.email,
        subject: `via ${node.name}`,
        text: "x",
      });
      expect(sent.code).toBe(250);
    }
    expect(
      target
        .at("/either")
        .map((m) => m.json.headers.subject)
        .sort(),
    ).toEqual(["via node-a", "via node-b"]);
    for (const node of nodes) {
      const listed = (await (await api(node, `${A}/incoming_statuses?address_id=${created.id}`)).json()) as { subject: string }[];
      expect(listed.map((s) => s.subject).sort()).toEqual(["via node-a", "via node-b"]);
    }
  }, 30_000);

  it("messages sent through either node are delivered once each", async () => {
    const ids: string[] = [];
    for (let i = 0; i < 20; i++) {
      const res = await send(nodes[i % 2]!, `once${i}@example.org`, `once ${i}`);
      expect(res.status).toBe(202);
      ids.push(((await res.json()) as { id: string }).id);
    }
    const copies = () => ids.map((id) => sink.messages.filter((m) => deliveredId(m.mailFrom) === id).length);
    await eventually(() => copies().every((n) => n >= 1), 20_000, "every message delivered");
    await Bun.sleep(LEASE_S * 1000);
    expect(copies()).toEqual(ids.map(() => 1));
  }, 40_000);

  it("scheduled messages (E11 and a batch, through either node) go out once each, not before their send_at (issue 34)", async () => {
    const sendAt = new Date(Date.now() + 3000).toISOString();
    const ids: string[] = [];
    for (let i = 0; i < 4; i++) {
      const body = { from: "ann@sender.test", to: `later${i}@example.org`, subject: `later ${i}`, plain: "x", send_at: sendAt };
      const res = await fetch(`http://127.0.0.1:${nodes[i % 2]!.http}/api/v0.1/${ACCOUNT_A.outboundId}/messages`, {
        method: "POST",
        headers: { authorization: `Bearer ${ACCOUNT_A.smtpKey}`, "content-type": "application/json" },
        body: JSON.stringify(body),
      });
      expect(res.status).toBe(202);
      ids.push(((await res.json()) as { id: string }).id);
    }
    const batch = await fetch(`http://127.0.0.1:${nodes[1]!.http}/api/v0.1/${ACCOUNT_A.outboundId}/messages/batch`, {
      method: "POST",
      headers: { authorization: `Bearer ${ACCOUNT_A.smtpKey}`, "content-type": "application/json" },
      body: JSON.stringify({
        messages: [4, 5, 6].map((i) => ({
          from: "ann@sender.test",
          to: `later${i}@example.org`,
          subject: `later ${i}`,
          plain: "x",
          send_at: sendAt,
        })),
      }),
    });
    expect(batch.status).toBe(200);
    ids.push(...((await batch.json()) as { results: { id: string }[] }).results.map((r) => r.id));
    const copies = () => ids.map((id) => sink.messages.filter((m) => deliveredId(m.mailFrom) === id).length);
    await Bun.sleep(2000);
    expect(copies()).toEqual(ids.map(() => 0));
    await eventually(() => copies().every((n) => n >= 1), 10_000, "every scheduled message delivered");
    expect(Date.now()).toBeGreaterThanOrEqual(Date.parse(sendAt));
    await Bun.sleep(LEASE_S * 1000);
    expect(copies()).toEqual(ids.map(() => 1));
  }, 40_000);

  it("an account's rate limit counts its calls on both nodes together", async () => {
    const statuses: number[] = [];
    for (let i = 0; i < 14; i++) {
      const res = await api(nodes[i % 2]!, `/api/v0.1/${ACCOUNT_B.id}/addresses`, "GET", undefined, ACCOUNT_B.token);
      statuses.push(res.status);
    }
    expect(statuses.filter((s) => s === 200).length).toBe(10);
    expect(statuses.filter((s) => s === 429).length).toBe(4);
  }, 30_000);

  it("`postroom tls status` beside either node reads the certificate in the database", async () => {
    for (const node of nodes) {
      const status = runCli(["tls", "status", "--config", node.config]);
      expect(status.stderr).toBe("");
      expect(status.stdout).toContain("names:   mx.postroom.test");
      expect(status.code).toBe(0);
    }
  });

  it("the certificate check runs once per tls.check_interval in the cluster, not once per node", async () => {
    const runs = async () =>
      (await Promise.all(nodes.map((n) => metric(n, "postroom_job_runs_total", { task: "check-certificate" })))).reduce((x, y) => x + y, 0);
    const before = await runs();
    const startedMs = Date.now();
    await Bun.sleep(10 * CERT_CHECK_S * 1000);
    const ran = (await runs()) - before;
    const periods = (Date.now() - startedMs) / (CERT_CHECK_S * 1000);
    console.info(`cluster test: check-certificate ran ${ran} times in ${periods.toFixed(1)} periods on 2 nodes`);
    expect(ran).toBeGreaterThanOrEqual(Math.floor(periods) - 1);
    expect(ran).toBeLessThanOrEqual(Math.ceil(periods) + 1);
  }, 40_000);

  it("the sending-domain verifier runs once a minute in the cluster, on one node", async () => {
    const runs = async () => Promise.all(nodes.map((n) => metric(n, "postroom_job_runs_total", { task: "verify-sending-domains" })));
    const before = await runs();
    const startedMs = Date.now();
    // Two minute marks at most 60 s apart: from the first run seen to the next.
    await eventually(async () => (await runs()).reduce((x, y) => x + y, 0) > before.reduce((x, y) => x + y, 0), 62_000, "a verifier run");
    const firstMs = Date.now();
    await Bun.sleep(Math.max(0, 61_000 - (firstMs - startedMs)));
    const after = await runs();
    const ran = after.reduce((x, y) => x + y, 0) - before.reduce((x, y) => x + y, 0);
    const minuteMarks = Math.floor(Date.now() / 60_000) - Math.floor(startedMs / 60_000);
    console.info(
      `cluster test: the verifier ran ${ran} times over ${minuteMarks} minute marks (per node: ${after.map((n, i) => n - before[i]!).join(", ")})`,
    );
    expect(ran).toBe(minuteMarks);
  }, 130_000);

  it("kill -9 of one node during a burst of sends: the other delivers every message that got a 202, after the dead node's leases ran out", async () => {
    const [a, b] = [nodes[0]!, nodes[1]!];
    const acknowledged = new Set<string>();
    let refused = 0;
    let killedAtMs = 0;
    let heldAtKill: string[] = [];
    const sendOne = async (i: number) => {
      try {
        const res = await send(i % 4 === 3 ? b : a, `burst${i}@example.org`, `burst ${i}`);
        if (res.status === 202) acknowledged.add(((await res.json()) as { id: string }).id);
        else refused++;
      } catch {
        refused++; // the connection died with the node: no 202, no promise made
      }
      if (!killedAtMs && acknowledged.size >= 150) {
        killedAtMs = Date.now();
        a.proc.signal("SIGKILL");
        const rows: { id: string }[] = await sql`SELECT id FROM outbound_recipients WHERE locked_by LIKE 'node-a/%'`;
        heldAtKill = rows.map((r) => r.id);
      }
    };
    await Promise.all(
      Array.from({ length: 8 }, (_, w) =>
        (async () => {
          for (let i = 0; i < 40; i++) await sendOne(w * 40 + i);
        })(),
      ),
    );
    expect(killedAtMs).toBeGreaterThan(0);
    expect(await a.proc.exited()).not.toBe(0);

    // Takeover: the recipients node A held at the kill are held by it no more (node B took them).
    let takenOverMs = 0;
    await eventually(
      async () => {
        const [row] = await sql`SELECT COUNT(*)::int AS n FROM outbound_recipients WHERE locked_by LIKE 'node-a/%'`;
        if (row.n > 0) return false;
        takenOverMs = Date.now() - killedAtMs;
        return true;
      },
      30_000,
      "node A's leases taken over",
    );
    const delivered = () => new Set(sink.messages.map((m) => deliveredId(m.mailFrom)));
    await eventually(() => [...acknowledged].every((id) => delivered().has(id)), 60_000, "every acknowledged message delivered");
    const copies = new Map<string, number>();
    for (const m of sink.messages)
      if (acknowledged.has(deliveredId(m.mailFrom))) copies.set(deliveredId(m.mailFrom), (copies.get(deliveredId(m.mailFrom)) ?? 0) + 1);
    const duplicates = [...copies.values()].filter((n) => n > 1).length;
    console.info(
      `cluster failover: ${acknowledged.size} acknowledged (202), ${refused} not acknowledged, ${heldAtKill.length} recipients leased by node-a at the kill, ` +
        `taken over ${takenOverMs} ms after it (outbound.lease_time ${LEASE_S} s), ${[...acknowledged].filter((id) => delivered().has(id)).length} of the acknowledged delivered, ${duplicates} delivered twice`,
    );
    expect([...acknowledged].filter((id) => !delivered().has(id))).toEqual([]);
    // The lease, plus the surviving worker's look at the queue (a second at most when idle).
    expect(takenOverMs).toBeLessThan((LEASE_S + 2) * 1000);
  }, 120_000);

  it("when PostgreSQL stops, the surviving node's /healthz says its store is not writable (503), and the node keeps running", async () => {
    const b = nodes[1]!;
    const health = async () => {
      const res = await fetch(`http://127.0.0.1:${b.http}/healthz`);
      return { status: res.status, store: ((await res.json()) as { checks: Record<string, string> }).checks.store };
    };
    expect(await health()).toEqual({ status: 200, store: "ok" });
    await pg.stop();
    const stoppedMs = Date.now();
    const failing = await eventually(
      async () => {
        const h = await health();
        return h.status === 503 ? h : undefined;
      },
      HEALTH_STALE_AFTER_MS + 5_000,
      "/healthz 503",
    );
    console.info(`cluster test: /healthz answered 503 ${Date.now() - stoppedMs} ms after PostgreSQL stopped: ${failing.store}`);
    expect(failing.store).toStartWith("not writable: ");
    expect(b.proc.proc.exitCode).toBeNull();
  }, 30_000);
});
