// A node on PostgreSQL whose server stops while the node is busy: a burst of API sends
// being delivered to a real SMTP sink, PostgreSQL stopped (fast shutdown: every session
// ended with "terminating connection due to administrator command") in the middle of it,
// several times over. The node must stay up through each outage (its jobs and workers see
// failing queries, its pooled and listening connections die), answer /healthz all along,
// and once PostgreSQL is back deliver every message it acknowledged (202) before.
import { afterAll, beforeAll, describe, expect } from "bun:test";
import { join } from "node:path";
import { SQL } from "bun";
import { deliveredId, makeClusterKeys, nodeApi, nodeDataDir, nodeSend } from "../helpers/cluster-node.ts";
import { TestDnsServer } from "../helpers/dns-server.ts";
import { ACCOUNT_A, testConfigToml } from "../helpers/fixtures.ts";
import { freePort } from "../helpers/pebble.ts";
import { postgresAvailable, startPostgres, type Postgres } from "../helpers/postgres.ts";
import { parsePostgresUrl } from "../../src/config/store-url.ts";
import { migratePostgres } from "../../src/store/postgres-migrate.ts";
import { ServeProcess } from "../helpers/process.ts";
import { publishRecords, SENDING_KEYS } from "../helpers/sending-domain.ts";
import { eventually, routeToSink, SmtpSink } from "../helpers/sink.ts";
import { sendWithNodemailer } from "../helpers/smtp.ts";
import { TestTarget } from "../helpers/target.ts";
import { tempDir } from "../helpers/tmp.ts";
import { WebhookReceiver } from "../helpers/webhook-receiver.ts";
import { requireTools } from "../helpers/tools.ts";

const it = requireTools("postgresql");
const A = `/api/v0.1/${ACCOUNT_A.id}`;
const OUTAGES = 4;
const SENDS_PER_ROUND = 60;
/** How long each outage lasts: long enough for every job and worker to run into it. */
const OUTAGE_MS = 2_500;

describe("a node on PostgreSQL when PostgreSQL stops mid-burst", () => {
  const dir = tempDir();
  let pg: Postgres;
  let dns: TestDnsServer;
  let sink: SmtpSink;
  let node: ServeProcess;
  let hook: WebhookReceiver;
  let target: TestTarget;
  let smtp = 0;
  let inboundAddress = "";
  let http = 0;

  beforeAll(async () => {
    if (!postgresAvailable()) return;
    // Commits flushed before they return (the tests' default is off): an immediate shutdown
    // loses no commit that answered, as on a production server.
    pg = await startPostgres({ settings: { synchronous_commit: "on" } });
    await migratePostgres(parsePostgresUrl(pg.url)!, { connectTimeoutMs: 10_000 });
    dns = await TestDnsServer.start();
    routeToSink(dns, "example.org");
    sink = await SmtpSink.start();
    // Each message takes the sink a moment: the burst is still being delivered when PostgreSQL stops.
    sink.dataDelayMs = 20;
    target = TestTarget.start();
    hook = WebhookReceiver.start("whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw");
    makeClusterKeys(dir.path);
    const dataDir = nodeDataDir(dir.path, "node");
    [http, smtp] = [await freePort(), await freePort()];
    const config = join(dir.path, "node.toml");
    const toml = testConfigToml({
      dataDir,
      dnsServer: dns.address,
      inbound: true,
      outbound: `${SENDING_KEYS}\nmx_port = ${sink.port}\nallow_private_mx = true\nlease_time = "3s"`,
      accounts: [{ ...ACCOUNT_A, extra: `webhook = { url = "${hook.url}", token = "hook-token", signing_secret = "${hook.secret}" }` }],
      extra: `[store]\nurl = "${pg.url}"\nmax_connections = 8\n[cluster]\nnode_id = "node"\n[webhooks]\nallow_private = true\nlease_time = "2s"`,
    })
      .replace('listen = "127.0.0.1:0"', `listen = "127.0.0.1:${http}"`)
      .replace('inbound_listen = "127.0.0.1:0"', `inbound_listen = "127.0.0.1:${smtp}"`)
      .replace('level = "warn"', 'level = "info"');
    await Bun.write(config, toml);
    node = ServeProcess.spawn(config, dir.path);
    await node.waitFor((l) => l.msg === "postroom started", 30_000);
    const domain = (await (await nodeApi(http, `${A}/sending_domains`, "POST", { domain: "sender.test" })).json()) as {
      id: string;
      dns_records: { type: string; host: string; value: string }[];
    };
    publishRecords(dns, domain);
    expect((await nodeApi(http, `${A}/sending_domains/${domain.id}/verify`, "POST")).status).toBe(200);
    const address = await nodeApi(http, `${A}/addresses`, "POST", { target: target.url("/in"), target_format: "json+n" });
    expect(address.status).toBe(201);
    inboundAddress = ((await address.json()) as { email: string }).email;
  }, 60_000);

  afterAll(async () => {
    // A node that is dying (the reason for a failure) is given a moment to say why.
    if (node) await Promise.race([node.proc.exited, Bun.sleep(2_000)]);
    if (node && node.proc.exitCode !== null) {
      const errors = node.lines.filter((l) => l.level === "error").map((l) => JSON.stringify(l));
      console.error(`the node exited ${node.proc.exitCode}; its last errors:\n${errors.slice(-3).join("\n")}\n${node.stderr}`);
    }
    node?.signal("SIGTERM");
    await node?.exited();
    await pg?.stop();
    await sink?.stop();
    await hook?.stop();
    await target?.stop();
    await dns?.stop();
    dir.remove();
  }, 30_000);

  it(`stays up through ${OUTAGES} outages in a burst, answers /healthz during each, and delivers every acknowledged message after`, async () => {
    const acknowledged = new Set<string>();
    /** Subjects of incoming mail the node answered 250. */
    const taken: string[] = [];
    const exited = () => node.proc.exitCode;
    for (let round = 0; round < OUTAGES; round++) {
      const deliveredBefore = sink.messages.length;
      // A webhook POST of this round's events is answered only once PostgreSQL is down.
      const post = hook.holdNext();
      const sends = Array.from({ length: SENDS_PER_ROUND }, (_, i) =>
        nodeSend(http, `r${round}n${i}@example.org`, `round ${round} message ${i}`)
          .then(async (res) => {
            if (res.status === 202) acknowledged.add(((await res.json()) as { id: string }).id);
          })
          .catch(() => {}),
      );
      // Mail coming in meanwhile, some of it while PostgreSQL stops.
      const incoming = Array.from({ length: 6 }, (_, i) =>
        Bun.sleep(i * 100).then(() =>
          sendWithNodemailer(smtp, { from: "ann@example.net", to: inboundAddress, subject: `in ${round}.${i}`, text: "x" }).then((r) => {
            if (r.code === 250) taken.push(`in ${round}.${i}`);
          }),
        ),
      );
      // PostgreSQL stops once the node is delivering this round's burst.
      await eventually(() => sink.messages.length > deliveredBefore + 5, 20_000, `round ${round}'s deliveries under way`);
      await post.arrived;
      // Fast shutdown (sessions ended with an error) and immediate (cut, as a crash), in turn.
      await pg.halt(round % 2 === 0 ? "fast" : "immediate");
      post.release();
      await Promise.all([...sends, ...incoming]);
      // A send while the store is away is refused (no 202: nothing was promised), not left hanging.
      const refused = await nodeSend(http, `down${round}@example.org`, `while down ${round}`);
      // 503 with Retry-After: the store is away, not a bug (before: 500 Internal Server Error).
      expect({ round, status: refused.status, retryAfter: refused.headers.get("retry-after"), body: await refused.json() }).toEqual({
        round,
        status: 503,
        retryAfter: "5",
        body: { status: 503, error: expect.stringMatching(/^Service Unavailable: the store \(PostgreSQL\) cannot be reached/) },
      });
      const downUntilMs = Date.now() + OUTAGE_MS;
      while (Date.now() < downUntilMs) {
        expect({ round, exitCode: exited() }).toEqual({ round, exitCode: null });
        const health = await fetch(`http://127.0.0.1:${http}/healthz`);
        expect([200, 503]).toContain(health.status);
        await Bun.sleep(250);
      }
      await pg.restart();
    }
    const delivered = () => new Set(sink.messages.map((m) => deliveredId(m.mailFrom)));
    const undelivered = () => [...acknowledged].filter((id) => !delivered().has(id));
    await eventually(() => exited() !== null || undelivered().length === 0, 40_000, "every 202 delivered").catch(async (err) => {
      const sql = new SQL(pg.url, { max: 1 });
      const rows = await sql`SELECT m.id, r.state, r.status, r.attempts, r.locked_by, r.next_attempt_at FROM outbound_messages m
        LEFT JOIN outbound_recipients r ON r.message_id = m.id WHERE m.id IN ${sql(undelivered().slice(0, 5))}`;
      await sql.close();
      throw new Error(`${err}: ${undelivered().length} undelivered, e.g. ${JSON.stringify(rows)} (now ${Date.now()})`);
    });
    console.info(
      `pg outage test: ${taken.length} incoming taken (250), ${acknowledged.size} acknowledged, ${sink.messages.length} delivered, node exit code ${exited()}`,
    );
    expect(exited()).toBeNull();
    expect([...acknowledged].filter((id) => !delivered().has(id))).toEqual([]);
    // Incoming mail answered 250 reached its target (the 250 follows the target's answer).
    const posted = new Set(target.at("/in").map((m) => m.json.headers.subject));
    expect(taken.filter((subject) => !posted.has(subject))).toEqual([]);
    // Its store check passes again at its next durable write.
    await eventually(async () => (await fetch(`http://127.0.0.1:${http}/healthz`)).status === 200, 10_000, "/healthz 200 again");
    const complaints = new Map<string, number>();
    for (const l of node.lines) if (l.level === "error" || l.level === "warn") complaints.set(l.msg, (complaints.get(l.msg) ?? 0) + 1);
    console.info(`pg outage test: the node's warnings and errors: ${JSON.stringify(Object.fromEntries(complaints))}`);
    // Loops that run every second or faster say an outage once (and once more when it ends), not once per turn.
    const loops = [
      "delivery worker tick failed",
      "webhook dispatcher tick failed",
      "reading destination pauses failed",
      "accounts in the store could not be reloaded; trying again",
      "job failed",
      "the sending IPs' health could not be read",
    ];
    expect(loops.filter((msg) => (complaints.get(msg) ?? 0) > OUTAGES)).toEqual([]);
    // A message whose stored bytes could not be read (the store was away) is not at fault:
    // no "could not be prepared" error on it, no attempt counted, no error event.
    expect(complaints.get("outbound copy could not be prepared") ?? 0).toBe(0);
    const sql = new SQL(pg.url, { max: 1 });
    const [errors] = await sql`SELECT COUNT(*)::int AS n FROM message_events WHERE kind = 'error'`;
    await sql.close();
    expect(errors.n).toBe(0);
  }, 120_000);
});
