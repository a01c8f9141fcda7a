// Nodes of one cluster started in this process: each its own data_dir holding the same
// shared keys (as an operator copies data_dir/keys to every node), the same PostgreSQL, and
// a node_id of its own ("node-1", "node-2"...). What the two-node tests share.
import { cpSync, mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { KEY_BYTES } from "../../src/lib/secret-key.ts";
import { SHARED_KEY_NAMES } from "../../src/store/node-keys.pg.ts";
import { startTestApp, type TestApp, type TestAppOptions } from "./app.ts";
import type { Postgres } from "./postgres.ts";

/** Starts `count` nodes on `pg`, in turn, each with `options` and `extra` ending in its [store] and [cluster] keys. */
export async function startTestNodes(pg: Postgres, dirPath: string, count: number, options: TestAppOptions): Promise<TestApp[]> {
  const keys = join(dirPath, "keys");
  mkdirSync(keys, { mode: 0o700 });
  for (const name of SHARED_KEY_NAMES)
    writeFileSync(join(keys, `${name}.key`), crypto.getRandomValues(new Uint8Array(KEY_BYTES)), { mode: 0o600 });
  const nodes: TestApp[] = [];
  for (let i = 1; i <= count; i++) {
    const dataDir = join(dirPath, `node-${i}`);
    cpSync(keys, join(dataDir, "keys"), { recursive: true });
    const extra = `${options.extra ?? ""}\n[store]\nurl = "${pg.url}"\n[cluster]\nnode_id = "node-${i}"`;
    nodes.push(await startTestApp({ ...options, dataDir, extra }));
  }
  return nodes;
}
