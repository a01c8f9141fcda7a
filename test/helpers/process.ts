// Runs the real `postroom` command as a child process, the way systemd would, and
// reads its JSON log lines.
import type { Subprocess } from "bun";

const MAIN = new URL("../../src/main.ts", import.meta.url).pathname;

export function runCli(args: string[], opts: { cwd?: string; env?: Record<string, string> } = {}) {
  const proc = Bun.spawnSync([process.execPath, MAIN, ...args], {
    cwd: opts.cwd,
    env: { ...process.env, ...opts.env },
    stdout: "pipe",
    stderr: "pipe",
  });
  return { code: proc.exitCode, stdout: proc.stdout.toString(), stderr: proc.stderr.toString() };
}

export class ServeProcess {
  readonly lines: Record<string, any>[] = [];
  private waiters: { match: (l: Record<string, any>) => boolean; resolve: (l: Record<string, any>) => void }[] = [];
  stderr = "";

  private constructor(readonly proc: Subprocess<"ignore", "pipe", "pipe">) {
    void this.pump();
    void (async () => {
      this.stderr = await new Response(proc.stderr).text();
    })();
  }

  /** `command`: how to run postroom (default: this Bun on src/main.ts; the smoke test passes the binary). */
  static spawn(configPath: string, cwd?: string, command: string[] = [process.execPath, MAIN]): ServeProcess {
    return ServeProcess.run([...command, "serve", "--config", configPath], cwd);
  }

  /** A whole command line that serves (e.g. a unit's ExecStart under setpriv); `env` added to this process's. */
  static run(argv: string[], cwd?: string, env?: Record<string, string>): ServeProcess {
    return new ServeProcess(Bun.spawn(argv, { cwd, env: { ...process.env, ...env }, stdin: "ignore", stdout: "pipe", stderr: "pipe" }));
  }

  private async pump() {
    const decoder = new TextDecoder();
    let buf = "";
    for await (const chunk of this.proc.stdout) {
      buf += decoder.decode(chunk, { stream: true });
      let nl: number;
      while ((nl = buf.indexOf("\n")) >= 0) {
        const text = buf.slice(0, nl);
        buf = buf.slice(nl + 1);
        let line: Record<string, any>;
        try {
          line = JSON.parse(text);
        } catch {
          line = { raw: text };
        }
        this.lines.push(line);
        this.waiters = this.waiters.filter((w) => (w.match(line) ? (w.resolve(line), false) : true));
      }
    }
  }

  /** The first log line (already seen or still to come) that matches. */
  waitFor(match: (l: Record<string, any>) => boolean, timeoutMs = 10_000): Promise<Record<string, any>> {
    const seen = this.lines.find(match);
    if (seen) return Promise.resolve(seen);
    return new Promise((resolve, reject) => {
      const timer = setTimeout(
        () =>
          reject(
            new Error(
              `no matching log line within ${timeoutMs} ms; got:\n${this.lines.map((l) => JSON.stringify(l)).join("\n")}\n${this.stderr}`,
            ),
          ),
        timeoutMs,
      );
      this.waiters.push({ match, resolve: (l) => (clearTimeout(timer), resolve(l)) });
    });
  }

  async httpPort(): Promise<number> {
    return (await this.waitFor((l) => l.msg === "http listening")).port;
  }

  signal(sig: NodeJS.Signals): void {
    this.proc.kill(sig);
  }

  exited(): Promise<number> {
    return this.proc.exited;
  }
}
