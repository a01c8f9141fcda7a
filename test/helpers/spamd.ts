// Debian's SpamAssassin spamd on a loopback port, for the tests of inbound.spamd. Local
// tests only (-L): no DNS blocklists, no network. As root it runs its children as nobody.
import { existsSync, mkdtempSync, rmSync } from "node:fs";
import { connect } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { freePort } from "./pebble.ts";

const SPAMD = "/usr/sbin/spamd";

export function spamdAvailable(): boolean {
  const found = existsSync(SPAMD);
  if (!found && process.env.CI === "true") throw new Error("spamd is required in CI (.ci/run installs spamassassin)");
  return found;
}

/** The GTUBE line: every SpamAssassin scores a message with it above 1000. */
export const GTUBE = "XJS*C4JDBQADN1.NSBN3*2IDNEN*GTUBE-STANDARD-ANTI-UBE-TEST-EMAIL*C.34X";

export interface RunningSpamd {
  address: string;
  stop(): Promise<void>;
}

/** PING SPAMC/1.5 answered with PONG: spamd has loaded its rules and takes requests. */
function pong(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const s = connect({ host: "127.0.0.1", port }, () => s.end("PING SPAMC/1.5\r\n\r\n"));
    let text = "";
    s.on("data", (d) => (text += d.toString()));
    s.on("end", () => resolve(text.includes("PONG")));
    s.on("error", () => resolve(false));
  });
}

export async function startSpamd(): Promise<RunningSpamd> {
  const port = await freePort();
  const dir = mkdtempSync(join(tmpdir(), "postroom-spamd-"));
  const args = [
    SPAMD,
    `--listen=127.0.0.1:${port}`,
    "-L",
    "-x",
    "--syslog=stderr",
    `--pidfile=${join(dir, "spamd.pid")}`,
    "--max-children=2",
  ];
  if (process.getuid?.() === 0) args.push("-u", "nobody");
  const proc = Bun.spawn(args, { stdout: "ignore", stderr: "ignore" });
  // Loading the rules takes a few seconds.
  const deadline = Date.now() + 60_000;
  while (!(await pong(port))) {
    if (Date.now() > deadline || proc.exitCode !== null) {
      proc.kill();
      throw new Error("spamd did not start");
    }
    await Bun.sleep(200);
  }
  return {
    address: `127.0.0.1:${port}`,
    async stop() {
      proc.kill("SIGTERM");
      await proc.exited;
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
