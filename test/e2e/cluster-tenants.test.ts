// Tenants by API on a cluster (issue 33): two built binaries on one PostgreSQL. An account
// and a token made on node A work on node B within a second; a token revoked on A, and an
// account suspended on A, are refused on B within a second (and on A at once).
import { afterAll, beforeAll, describe, expect } from "bun:test";
import { join } from "node:path";
import { hashSecret } from "../../src/auth/secrets.ts";
import { builtBinary } from "../helpers/binary.ts";
import { makeClusterKeys, nodeApi, nodeDataDir } from "../helpers/cluster-node.ts";
import { ACCOUNT_A, testConfigToml } from "../helpers/fixtures.ts";
import { freePort } from "../helpers/pebble.ts";
import { postgresAvailable, startPostgres, type Postgres } from "../helpers/postgres.ts";
import { runCli, ServeProcess } from "../helpers/process.ts";
import { tempDir } from "../helpers/tmp.ts";
import { requireTools } from "../helpers/tools.ts";

const it = requireTools("postgresql");
const OPERATOR = "pr_operator_token_cluster_tenants";
/** What API.md section 10 allows for every node to see a change. */
const WITHIN_MS = 1000;

describe("tenants on two nodes of one PostgreSQL", () => {
  const dir = tempDir();
  let pg: Postgres;
  const nodes: { http: number; proc: ServeProcess; config: string }[] = [];

  const op = async (node: number, method: string, path: string, body?: unknown) => {
    const res = await nodeApi(nodes[node]!.http, `/api/v0.1/operator${path}`, method, body, OPERATOR);
    return { status: res.status, body: (await res.json()) as any };
  };
  const statusOn = async (node: number, path: string, token: string) =>
    (await nodeApi(nodes[node]!.http, path, "GET", undefined, token)).status;

  /** How long until `path` with `token` answers `status` on node B; fails past a few seconds. */
  async function msUntilOnB(path: string, token: string, status: number): Promise<number> {
    const started = performance.now();
    while (performance.now() - started < 5000) {
      if ((await statusOn(1, path, token)) === status) return performance.now() - started;
      await Bun.sleep(20);
    }
    throw new Error(`node B never answered ${status} for ${path}`);
  }

  beforeAll(async () => {
    if (!postgresAvailable()) return;
    pg = await startPostgres();
    makeClusterKeys(dir.path);
    for (const name of ["node-a", "node-b"]) {
      const http = await freePort();
      const config = join(dir.path, `${name}.toml`);
      const toml = testConfigToml({
        dataDir: nodeDataDir(dir.path, name),
        accounts: [ACCOUNT_A],
        extra: `[dashboard]\nadmin_tokens = ["${hashSecret(OPERATOR)}"]\n[store]\nurl = "${pg.url}"\n[cluster]\nnode_id = "${name}"`,
      })
        .replace('listen = "127.0.0.1:0"', `listen = "127.0.0.1:${http}"`)
        .replace('level = "warn"', 'level = "info"');
      await Bun.write(config, toml);
      nodes.push({ http, config, proc: null as unknown as ServeProcess });
    }
    const migrated = runCli(["migrate", "--config", nodes[0]!.config]);
    expect(migrated.code).toBe(0);
    for (const node of nodes) {
      node.proc = ServeProcess.spawn(node.config, dir.path, [builtBinary()]);
      await node.proc.waitFor((l) => l.msg === "postroom started", 30_000);
    }
  }, 180_000);

  afterAll(async () => {
    for (const n of nodes) {
      n.proc?.signal("SIGTERM");
      await n.proc?.exited();
    }
    await pg?.stop();
    dir.remove();
  }, 60_000);

  it("a token made on A works on B within a second; revoked on A, it is refused on A at once and on B within a second", async () => {
    const account = (await op(0, "POST", "/accounts", { name: "clustered" })).body;
    const minted = (await op(0, "POST", `/accounts/${account.id}/api_tokens`, {})).body;
    const path = `/api/v0.1/${account.id}/addresses`;
    expect(await statusOn(0, path, minted.token)).toBe(200);
    expect(await msUntilOnB(path, minted.token, 200)).toBeLessThan(WITHIN_MS);
    // B has seen the token: now its revocation must reach B's registry.
    expect((await op(0, "DELETE", `/accounts/${account.id}/api_tokens/${minted.id}`)).status).toBe(202);
    expect(await statusOn(0, path, minted.token)).toBe(401);
    expect(await msUntilOnB(path, minted.token, 401)).toBeLessThan(WITHIN_MS);
    // Listed alike on both nodes.
    expect((await op(1, "GET", `/accounts/${account.id}`)).body.api_tokens).toEqual([]);
  }, 30_000);

  it("an account suspended on A is refused on B within a second, its outbound key too; lifted, both work again", async () => {
    const account = (await op(0, "POST", "/accounts", { name: "to suspend" })).body;
    const token = (await op(0, "POST", `/accounts/${account.id}/api_tokens`, {})).body.token;
    const outbound = (await op(0, "POST", `/accounts/${account.id}/outbound_accounts`, {})).body;
    const path = `/api/v0.1/${account.id}/addresses`;
    await msUntilOnB(path, token, 200);
    expect((await op(0, "PATCH", `/accounts/${account.id}`, { suspended: true })).status).toBe(200);
    expect(await statusOn(0, path, token)).toBe(403);
    expect(await msUntilOnB(path, token, 403)).toBeLessThan(WITHIN_MS);
    const send = await nodeApi(
      nodes[1]!.http,
      `/api/v0.1/${outbound.id}/messages`,
      "POST",
      { from: "a@x.test", to: "b@y.test", subject: "s", plain: "p" },
      outbound.key,
    );
    expect(send.status).toBe(403);
    // Lifted on B: either node may change it, and B holds it at once; A follows.
    expect((await op(1, "PATCH", `/accounts/${account.id}`, { suspended: false })).status).toBe(200);
    expect(await statusOn(1, path, token)).toBe(200);
    await Bun.sleep(WITHIN_MS);
    expect(await statusOn(0, path, token)).toBe(200);
    const audit = (await op(1, "GET", `/audit?account_id=${account.id}`)).body.map((e: { action: string }) => e.action);
    expect(audit).toEqual(["account.update", "account.update", "outbound_account.create", "api_token.create", "account.create"]);
  }, 30_000);
});
