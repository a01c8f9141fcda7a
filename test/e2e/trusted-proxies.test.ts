// The built binary behind a reverse proxy (issue 31, finding 6): with the proxy in
// http.trusted_proxies, one client failing dashboard sign-in until it is limited does not
// lock out another, and the log names each client; a bad entry stops `serve` naming it.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { join } from "node:path";
import { startBinaryAppliance, type BinaryAppliance } from "../helpers/binary-appliance.ts";
import { builtBinary } from "../helpers/binary.ts";
import { ACCOUNT_A, testConfigToml } from "../helpers/fixtures.ts";
import { signInFrom, startForwardingProxy, type ForwardingProxy } from "../helpers/forwarding-proxy.ts";
import { freePort } from "../helpers/pebble.ts";
import { tempDir } from "../helpers/tmp.ts";

let appliance: BinaryAppliance;
let proxy: ForwardingProxy;
beforeAll(async () => {
  appliance = await startBinaryAppliance({ http: 'trusted_proxies = ["127.0.0.1"]', extra: '[dashboard]\nsign_in_rate = "3/min"' });
  proxy = startForwardingProxy(appliance.http, await freePort());
}, 120_000);
afterAll(async () => {
  await proxy?.stop();
  await appliance?.stop();
});

describe("the binary behind a trusted proxy", () => {
  test("one client locked out of sign-in leaves another signing in; the log names each client, never the proxy", async () => {
    for (let i = 0; i < 3; i++) expect(await signInFrom("127.0.0.2", proxy.url, "pr_wrong")).toBe(401);
    expect(await signInFrom("127.0.0.2", proxy.url, ACCOUNT_A.token)).toBe(429);
    expect(await signInFrom("127.0.0.3", proxy.url, ACCOUNT_A.token)).toBe(201);
    await appliance.server.waitFor((l) => l.msg === "dashboard sign-in" && l.remote_ip === "127.0.0.3");
    const lines = appliance.server.lines.filter((l) => l.msg === "http request" && l.path === "/dashboard/session");
    expect(lines.map((l) => [l.status, l.remote_ip])).toEqual([
      [401, "127.0.0.2"],
      [401, "127.0.0.2"],
      [401, "127.0.0.2"],
      [429, "127.0.0.2"],
      [201, "127.0.0.3"],
    ]);
  });

  test("a client straight on the listener (not a trusted proxy) keeps its address whatever X-Forwarded-For it sends", async () => {
    for (let i = 0; i < 3; i++)
      expect(await signInFrom("127.0.0.4", appliance.http, "pr_wrong", { "x-forwarded-for": `198.51.100.${i + 1}` })).toBe(401);
    expect(await signInFrom("127.0.0.4", appliance.http, ACCOUNT_A.token, { "x-forwarded-for": "198.51.100.99" })).toBe(429);
  });
});

test("a trusted_proxies entry that is not an address or range stops serve, naming the key and the entry", async () => {
  const dir = tempDir();
  try {
    const path = join(dir.path, "postroom.toml");
    await Bun.write(path, testConfigToml({ dataDir: join(dir.path, "data"), http: 'trusted_proxies = ["127.0.0.1", "10.0.0.0/33"]' }));
    const proc = Bun.spawn([builtBinary(), "serve", "--config", path], { cwd: dir.path, stdout: "pipe", stderr: "pipe" });
    expect(await proc.exited).toBe(1);
    expect(await new Response(proc.stderr).text()).toContain(
      'http.trusted_proxies[1]: "10.0.0.0/33" is not an IP address or CIDR range (such as "127.0.0.1", "10.0.0.0/8" or "fd00::/8")',
    );
  } finally {
    dir.remove();
  }
}, 120_000);
