// (beyond) Issue 35: two nodes (the built binary twice) on one PostgreSQL, addresses with
// on_target_failure = "queue". Messages taken by either node while the target answers 503
// are kept in the shared store; both nodes look for due messages every second, and each
// message claimed by one of them (a lease per message). When the target is back, each
// message is posted exactly once, whichever node posts it.
import { afterAll, beforeAll, describe, expect } from "bun:test";
import { join } from "node:path";
import { builtBinary } from "../helpers/binary.ts";
import { makeClusterKeys, nodeApi, nodeDataDir } from "../helpers/cluster-node.ts";
import { ACCOUNT_A, testConfigToml } from "../helpers/fixtures.ts";
import { freePort } from "../helpers/pebble.ts";
import { postgresAvailable, startPostgres, type Postgres } from "../helpers/postgres.ts";
import { ServeProcess } from "../helpers/process.ts";
import { eventually } from "../helpers/sink.ts";
import { sendWithNodemailer } from "../helpers/smtp.ts";
import { TestTarget } from "../helpers/target.ts";
import { tempDir } from "../helpers/tmp.ts";
import { requireTools } from "../helpers/tools.ts";

const it = requireTools("postgresql");
const A = `/api/v0.1/${ACCOUNT_A.id}`;
const MESSAGES = 6;

interface Node {
  http: number;
  smtp: number;
  proc: ServeProcess;
}

describe('on_target_failure = "queue" on two nodes sharing PostgreSQL', () => {
  const dir = tempDir();
  let pg: Postgres;
  let target: TestTarget;
  const nodes: Node[] = [];

  async function node(name: string): Promise<{ config: string; http: number; smtp: number }> {
    const [http, smtp] = [await freePort(), await freePort()];
    const config = join(dir.path, `${name}.toml`);
    const toml = testConfigToml({
      dataDir: nodeDataDir(dir.path, name),
      inbound: true,
      inboundKeys: 'retry_delays = ["1s"]\nmax_queue_time = "1h"',
      accounts: [ACCOUNT_A],
      extra: `[store]\nurl = "${pg.url}"\nmax_connections = 4\n[cluster]\nnode_id = "${name}"`,
    })
      .replace('listen = "127.0.0.1:0"', `listen = "127.0.0.1:${http}"`)
      .replace('inbound_listen = "127.0.0.1:0"', `inbound_listen = "127.0.0.1:${smtp}"`)
      .replace('level = "warn"', 'level = "info"');
    await Bun.write(config, toml);
    return { config, http, smtp };
  }

  beforeAll(async () => {
    if (!postgresAvailable()) return;
    pg = await startPostgres();
    target = TestTarget.start();
    makeClusterKeys(dir.path);
    const configs = [await node("node-a"), await node("node-b")];
    const migrated = Bun.spawnSync([builtBinary(), "migrate", "--config", configs[0]!.config], { cwd: dir.path });
    expect(migrated.exitCode).toBe(0);
    for (const c of configs) {
      const proc = ServeProcess.spawn(c.config, dir.path, [builtBinary()]);
      await proc.waitFor((l) => l.msg === "postroom started", 30_000);
      nodes.push({ http: c.http, smtp: c.smtp, proc });
    }
  }, 180_000);

  afterAll(async () => {
    for (const n of nodes) {
      n.proc.signal("SIGTERM");
      await n.proc.exited();
    }
    await pg?.stop();
    await target?.stop();
    dir.remove();
  }, 60_000);

  it("each message taken while the target is down is posted once when it is back", async () => {
    target.answers.set("/cluster", { status: 503, body: "down" });
    const res = await nodeApi(nodes[0]!.http, `${A}/addresses`, "POST", {
      target: target.url("/cluster"),
      target_format: "json+n",
      on_target_failure: "queue",
    });
    const addr = (await res.json()) as { id: string; email: string };
    for (let i = 0; i < MESSAGES; i++) {
      const sent = await sendWithNodemailer(nodes[i % 2]!.smtp, {
        from: "bob@sender.test",
        to: addr.email,
        subject: `m${i}`,
        text: `m${i}\n`,
      });
      expect(sent.code).toBe(250);
    }
    // Both nodes poll; the messages are posted again while the target is still down.
    await eventually(() => target.at("/cluster").length >= 2 * MESSAGES, 15_000, "second POSTs while down");
    target.answers.set("/cluster", { status: 200, body: "ok" });
    const switched = target.at("/cluster").length;
    await eventually(
      async () => {
        const list = (await (await nodeApi(nodes[1]!.http, `${A}/incoming_statuses?address_id=${addr.id}`)).json()) as { state: string }[];
        return list.length === MESSAGES && list.every((s) => s.state === "delivered");
      },
      20_000,
      "every status delivered",
    );
    await Bun.sleep(3000);
    const after = target.at("/cluster").slice(switched);
    // A POST that was under way at the switch may have been answered 503; every message got exactly one 200 after it.
    const subjects = after.map((r) => r.json.headers.subject as string).sort();
    expect(subjects).toEqual(Array.from({ length: MESSAGES }, (_, i) => `m${i}`).sort());
  }, 90_000);
});
