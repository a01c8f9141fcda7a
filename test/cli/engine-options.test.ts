// `serve` executes itself again, in place, with the engine's options (src/engine-options.ts):
// the decision as a table, then the built binary and `bun src/main.ts` as users start them.
import { describe, expect, test } from "bun:test";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { ENGINE_OPTIONS, engineRestart, type ProcessShape } from "../../src/engine-options.ts";
import { builtBinary } from "../helpers/binary.ts";
import { testConfigToml } from "../helpers/fixtures.ts";
import { ServeProcess } from "../helpers/process.ts";
import { tempDir } from "../helpers/tmp.ts";

const SCRIPT: ProcessShape = {
  argv: ["/usr/bin/bun", "/opt/postroom/src/main.ts", "serve", "--config", "p.toml"],
  execArgv: ["--smol"],
  execPath: "/usr/bin/bun",
  argv0: "bun",
  env: { HOME: "/root", UNSET: undefined },
};
const BINARY: ProcessShape = {
  argv: ["bun", "/$bunfs/root/postroom", "serve", "-c", "/etc/postroom.toml"],
  execArgv: [],
  execPath: "/usr/local/bin/postroom",
  argv0: "/usr/local/bin/postroom",
  env: { POSTROOM_CONFIG: "/etc/postroom.toml" },
};

describe("engineRestart", () => {
  test("bun src/main.ts serve: the runtime, its flags, the script and the arguments again, the options added", () => {
    expect(engineRestart(SCRIPT)).toEqual({
      path: "/usr/bin/bun",
      args: ["bun", "--smol", "/opt/postroom/src/main.ts", "serve", "--config", "p.toml"],
      env: { HOME: "/root", ...ENGINE_OPTIONS },
    });
  });
  test("the compiled binary serve: the binary and the arguments, not its /$bunfs/ script", () => {
    expect(engineRestart(BINARY)).toEqual({
      path: "/usr/local/bin/postroom",
      args: ["/usr/local/bin/postroom", "serve", "-c", "/etc/postroom.toml"],
      env: { POSTROOM_CONFIG: "/etc/postroom.toml", ...ENGINE_OPTIONS },
    });
  });
  test.each([
    ["another command", { argv: ["bun", "/$bunfs/root/postroom", "check-config"] }],
    ["no command", { argv: ["bun", "/$bunfs/root/postroom"] }],
    ["serve not first", { argv: ["bun", "/$bunfs/root/postroom", "--config", "x", "serve"] }],
    ["the operator's own value", { env: { BUN_JSC_useFTLJIT: "1" } }],
    ["already executed again", { env: { ...ENGINE_OPTIONS } }],
  ])("%s: nothing is executed again", (_, change) => {
    expect(engineRestart({ ...BINARY, ...change })).toBeNull();
  });
});

/** The environment of a running process, by its PID. */
const environOf = (pid: number) =>
  Object.fromEntries(
    readFileSync(`/proc/${pid}/environ`, "latin1")
      .split("\0")
      .map((e) => e.split(/=(.*)/s).slice(0, 2)),
  );

describe.each([
  ["the built binary", () => [builtBinary()]],
  ["bun src/main.ts", () => [process.execPath, new URL("../../src/main.ts", import.meta.url).pathname]],
])("%s serve", (_, command) => {
  const serveWith = async (env: Record<string, string>) => {
    const dir = tempDir();
    const config = join(dir.path, "postroom.toml");
    // At info, it logs the port it listens on.
    await Bun.write(config, testConfigToml({ dataDir: join(dir.path, "data") }).replace('level = "warn"', 'level = "info"'));
    const server = ServeProcess.run([...command(), "serve", "--config", config], dir.path, env);
    const port = await server.httpPort();
    const health = await fetch(`http://127.0.0.1:${port}/healthz`);
    const environ = environOf(server.proc.pid);
    server.signal("SIGTERM");
    await server.exited();
    dir.remove();
    return { status: health.status, environ };
  };

  test("runs with the engine's options, under the PID it was started with, and serves", async () => {
    const { status, environ } = await serveWith({});
    expect(status).toBe(200);
    // Set in this PID's environment although the test did not set it: executed again in place.
    for (const [name, value] of Object.entries(ENGINE_OPTIONS)) expect(environ[name]).toBe(value);
  }, 20_000);

  test("keeps the operator's BUN_JSC_useFTLJIT", async () => {
    const { status, environ } = await serveWith({ BUN_JSC_useFTLJIT: "1" });
    expect(status).toBe(200);
    expect(environ.BUN_JSC_useFTLJIT).toBe("1");
  }, 20_000);
});
