// A bad [[outbound.destinations]] rule, as an operator meets it: `postroom check-config` and
// `postroom serve` (the real command, in a child process) both exit 1 naming the key.
import { afterAll, describe, expect, test } from "bun:test";
import { join } from "node:path";
import { testConfigToml } from "../helpers/fixtures.ts";
import { runCli } from "../helpers/process.ts";
import { tempDir } from "../helpers/tmp.ts";

const dir = tempDir();
afterAll(() => dir.remove());

const BAD_RULE = `[[outbound.destinations]]\nname = "gmail"\nmx = [".google.com"]\nrate = "600 a minute"\nmax_conections = 5`;

describe("a bad destination rule", () => {
  test.each([["check-config"], ["serve"]])("postroom %s names the malformed rate and the unknown key, and exits 1", async (command) => {
    const path = join(dir.path, `${command}.toml`);
    await Bun.write(path, testConfigToml({ dataDir: join(dir.path, "data"), outbound: BAD_RULE }));
    const r = runCli([command, "--config", path]);
    expect(r.code).toBe(1);
    expect(r.stderr).toContain('outbound.destinations[0].max_conections: unknown key; did you mean "max_connections"?');
    expect(r.stderr).toContain('outbound.destinations[0].rate: must be "N/s", "N/min", "N/h" or "off"');
  });
});
