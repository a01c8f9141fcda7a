// A sending address this host does not have is a start-time error naming its key
// (issue 29): `postroom check-config` and `postroom serve` both exit 1 and say which
// address, never a delivery that fails with EADDRNOTAVAIL later.
import { afterAll, describe, expect, test } from "bun:test";
import { join } from "node:path";
import { ACCOUNT_A, testConfigToml } from "../helpers/fixtures.ts";
import { runCli, ServeProcess } from "../helpers/process.ts";
import { tempDir } from "../helpers/tmp.ts";

const dir = tempDir();
afterAll(() => dir.remove());

const PROBLEM =
  "outbound.ip_pools[0].addresses[1].ip: 203.0.113.7 is not an address of this host: add it to an interface, or take it out of the pool";

async function writeConfig(name: string, pool: string, accountPool = "bulk"): Promise<string> {
  const path = join(dir.path, name);
  const toml = testConfigToml({
    dataDir: join(dir.path, "data"),
    outbound: `[[outbound.ip_pools]]\nname = "bulk"\naddresses = [${pool}]`,
    accounts: [{ ...ACCOUNT_A, outboundExtra: `ip_pool = "${accountPool}"` }],
  });
  await Bun.write(path, toml);
  return path;
}

describe("a pool address this host does not have", () => {
  test("check-config names its key and exits 1", async () => {
    const path = await writeConfig(
      "missing-ip.toml",
      '{ ip = "127.0.0.2", helo = "mta2.example.com" }, { ip = "203.0.113.7", helo = "mta7.example.com" }',
    );
    const r = runCli(["check-config", "--config", path]);
    expect(r.stderr).toBe(`${path}: 1 problem:\n  ${PROBLEM}\n`);
    expect(r.code).toBe(1);
  });

  test("serve names its key and exits 1 before listening", async () => {
    const path = await writeConfig(
      "missing-ip-serve.toml",
      '{ ip = "127.0.0.2", helo = "mta2.example.com" }, { ip = "203.0.113.7", helo = "mta7.example.com" }',
    );
    const p = ServeProcess.spawn(path);
    expect(await p.exited()).toBe(1);
    expect(p.stderr).toContain(PROBLEM);
  });

  test("check-config names an unknown pool of an outbound account", async () => {
    const path = await writeConfig("unknown-pool.toml", '{ ip = "127.0.0.2", helo = "mta2.example.com" }', "transactional");
    const r = runCli(["check-config", "--config", path]);
    expect(r.stderr).toContain(
      'accounts[0].outbound[0].ip_pool: names no pool: "transactional" is not the name of an [[outbound.ip_pools]] table (known: "bulk")',
    );
    expect(r.code).toBe(1);
  });

  test("addresses the host has (127.0.0.2 and 127.0.0.3 on loopback) pass", async () => {
    const path = await writeConfig(
      "good.toml",
      '{ ip = "127.0.0.2", helo = "mta2.example.com" }, { ip = "127.0.0.3", helo = "mta3.example.com" }',
    );
    const r = runCli(["check-config", "--config", path]);
    expect(r.stderr).toBe("");
    expect(r.code).toBe(0);
  });
});
