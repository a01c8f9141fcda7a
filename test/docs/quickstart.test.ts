// docs/quickstart.md runs as written: its shell blocks, in order, with bash, against the
// appliance started from config.example.toml in a temp dir, and each prints what the page
// says it prints (IDs and times aside). The one substitution made is the one the page asks
// its reader for: the address ID its answer gave in place of the page's.
//
// Ports: the appliance runs from a copy of config.example.toml with only its ports changed
// (8080, 2525, 5870, and the target's 8000), and the commands get the same ports, so that
// this test never meets another Postroom on the example's fixed ports (a developer's
// `bun run start`, .ci/run's binary check, another worktree on the same machine). The test
// first checks that the commands use exactly the example config's ports.
import { afterAll, describe, expect } from "bun:test";
import { readFileSync } from "node:fs";
import { connect } from "node:net";
import { join } from "node:path";
import { parse as parseToml } from "smol-toml";
import { freePort } from "../helpers/pebble.ts";
import { ServeProcess } from "../helpers/process.ts";
import { eventually } from "../helpers/sink.ts";
import { tempDir } from "../helpers/tmp.ts";
import { requireTools } from "../helpers/tools.ts";
import { docBlocks, outputDifferences } from "./doc-blocks.ts";

const ROOT = new URL("../../", import.meta.url).pathname;
const page = readFileSync(join(ROOT, "docs/quickstart.md"), "utf8");
const exampleToml = readFileSync(join(ROOT, "config.example.toml"), "utf8");
const example = parseToml(exampleToml) as { http: { listen: string }; smtp: { inbound_listen: string; submission_listen: string } };
const portOf = (listen: string) => Number(listen.split(":").pop());
const dir = tempDir();
const running: { kill(): void }[] = [];
afterAll(() => {
  for (const p of running) p.kill();
  dir.remove();
});

const withTools = requireTools("swaks");

async function listening(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = connect(port, "127.0.0.1");
    socket.once("connect", () => (socket.end(), resolve(true)));
    socket.once("error", () => resolve(false));
  });
}

describe("docs/quickstart.md", () => {
  withTools(
    "its commands run as written against the example config and print what the page shows",
    async () => {
      const blocks = docBlocks(page);
      const [appliance, target, ...others] = blocks.filter((b) => b.kind === "keep-running");
      expect(others).toEqual([]);
      // The appliance is started the README's way; `run start` is the package's start script.
      expect(appliance!.text.trim()).toBe("npx -y bun@1.4.5 install && npx -y bun@1.4.5 run start");
      expect(readFileSync(join(ROOT, "README.md"), "utf8")).toContain(appliance!.text.trim());
      const pkg = JSON.parse(readFileSync(join(ROOT, "package.json"), "utf8")) as { scripts: Record<string, string> };
      expect(pkg.scripts.start).toBe("bun src/main.ts serve --config config.example.toml");

      // The commands use the example config's own ports (and the target its 8000).
      const httpPort = portOf(example.http.listen);
      const inboundPort = portOf(example.smtp.inbound_listen);
      const commands = blocks.filter((b) => b.kind === "command").map((b) => b.text);
      expect(commands.filter((c) => c.includes("curl")).every((c) => c.includes(`http://127.0.0.1:${httpPort}/`))).toBe(true);
      expect(commands.some((c) => c.includes(`swaks --server 127.0.0.1:${inboundPort} `))).toBe(true);
      expect(target!.text).toContain(".listen(8000,");
      const ports = new Map<string, string>();
      for (const p of [httpPort, inboundPort, portOf(example.smtp.submission_listen), 8000]) ports.set(String(p), String(await freePort()));
      const movePorts = (s: string) => s.replace(/\b(\d{4,5})\b/g, (m) => ports.get(m) ?? m);

      await Bun.write(join(dir.path, "config.example.toml"), movePorts(exampleToml));
      const app = ServeProcess.spawn("config.example.toml", dir.path);
      running.push({ kill: () => app.signal("SIGTERM") });
      await app.waitFor((l) => l.msg === "postroom started", 20_000);

      const targetProc = Bun.spawn(["bash", "-c", movePorts(target!.text)], { cwd: dir.path, stdout: "pipe", stderr: "inherit" });
      running.push({ kill: () => targetProc.kill() });
      let targetOut = "";
      void (async () => {
        for await (const chunk of targetProc.stdout) targetOut += new TextDecoder().decode(chunk);
      })();
      await eventually(() => listening(Number(ports.get("8000"))), 10_000, "the target to listen");

      // The one substitution the page asks for: "put your address's ID in place of `...`".
      const shownId = /put your address's ID in place of `([0-9a-f]{20})`/.exec(page)?.[1];
      expect(shownId).toBeDefined();
      let realId: string | undefined;
      const substitute = (s: string) => (realId ? s.replaceAll(shownId!, realId) : s);

      const outputs = new Map<number, string>();
      for (const [i, block] of blocks.entries()) {
        if (block.kind === "command") {
          const run = Bun.spawnSync(["bash", "-c", movePorts(substitute(block.text))], { cwd: dir.path, stdout: "pipe", stderr: "pipe" });
          const out = run.stdout.toString();
          expect({ command: block.text, code: run.exitCode, stderr: run.exitCode ? run.stderr.toString() : "" }).toEqual({
            command: block.text,
            code: 0,
            stderr: "",
          });
          // A command whose answer the page does not show still must not be an error.
          if (out.startsWith("{")) expect(JSON.parse(out).error).toBeUndefined();
          outputs.set(i, out);
          if (!realId && out.includes('"email"')) realId = JSON.parse(out).id;
        } else if (block.kind === "output") {
          const out = outputs.get(block.of!)!;
          expect({ command: blocks[block.of!]!.text, differences: outputDifferences(movePorts(substitute(block.text)), out) }).toEqual({
            command: blocks[block.of!]!.text,
            differences: [],
          });
        } else if (block.kind === "target-output") {
          const shown = movePorts(substitute(block.text));
          await eventually(() => targetOut.includes("\n{"), 10_000, "the target to print the POST");
          expect(outputDifferences(shown, targetOut)).toEqual([]);
        }
      }
      expect(realId).toMatch(/^[0-9a-f]{20}$/);
      expect(outputs.size).toBe(6);
    },
    60_000,
  );
});
