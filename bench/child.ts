// A server under test as a child process that logs JSON lines on stdout (Postroom's
// `serve`, bench/bare-pipeline.ts): wait for a start-up line, watch every later line
// (counted, and handed to an optional listener: bench/delivery-tally.ts counts delivery
// lines with it), read its CPU time from /proc, stop it with SIGTERM.
import { existsSync, mkdirSync, readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import type { Subprocess } from "bun";

export type LogLine = Record<string, unknown>;

export const CLK_TCK = (() => {
  const out = Bun.spawnSync(["getconf", "CLK_TCK"]).stdout.toString().trim();
  return Number(out) > 0 ? Number(out) : 100;
})();

/** Fields of /proc/PID/stat (of its thread TID, if given) after the command name: index 11 utime, 12 stime, 13 cutime, 14 cstime, 1 ppid. */
export function procStat(pid: number, tid?: number): string[] | null {
  try {
    const stat = readFileSync(tid === undefined ? `/proc/${pid}/stat` : `/proc/${pid}/task/${tid}/stat`, "utf8");
    return stat.slice(stat.lastIndexOf(")") + 2).split(" ");
  } catch {
    return null;
  }
}

/** CPU time of a process (user + system, all threads) in ms; with `children`, also of its reaped children. */
export function processCpuMs(pid: number, children = false): number {
  const f = procStat(pid);
  if (!f) return 0;
  const ticks = Number(f[11]) + Number(f[12]) + (children ? Number(f[13]) + Number(f[14]) : 0);
  return (ticks * 1000) / CLK_TCK;
}

/**
 * CPU time in ms of a process and all its descendants (user + system, all threads): each
 * living one's own time plus what it has of its reaped children, so a child that exits
 * between two readings moves from its own line to its parent's and the sum stays
 * continuous (a PostgreSQL server's backends come and go). 0 once the process is gone.
 */
export function processTreeCpuMs(root: number): number {
  const children = new Map<number, number[]>();
  for (const entry of readdirSync("/proc")) {
    const pid = Number(entry);
    if (!Number.isInteger(pid) || pid === root) continue;
    const f = procStat(pid);
    if (!f) continue;
    const ppid = Number(f[1]);
    children.set(ppid, [...(children.get(ppid) ?? []), pid]);
  }
  let ticks = 0;
  const visit = (pid: number) => {
    const f = procStat(pid);
    if (!f) return;
    ticks += Number(f[11]) + Number(f[12]) + Number(f[13]) + Number(f[14]);
    for (const child of children.get(pid) ?? []) visit(child);
  };
  visit(root);
  return (ticks * 1000) / CLK_TCK;
}

/** Stops a child process with SIGTERM and waits until it has exited (at once if it already has). */
export async function terminate(proc: Subprocess): Promise<void> {
  if (proc.exitCode !== null || proc.signalCode !== null) return;
  proc.kill("SIGTERM");
  await proc.exited;
}

/**
 * Bun flags that profile a child's main thread (--profile): on exit it writes
 * DIR/NAME.cpuprofile and a markdown report next to it. None without a DIR.
 */
export function cpuProfileArgs(dir: string | null, name: string): string[] {
  if (!dir) return [];
  mkdirSync(dir, { recursive: true });
  return ["--cpu-prof", "--cpu-prof-md", `--cpu-prof-dir=${dir}`, `--cpu-prof-name=${name}`];
}

/** What the profile `cpuProfileArgs(dir, name)` asked for shows (`summarize` of DIR/NAME.cpuprofile), headed "LABEL main thread"; once the child has exited, as only then is it written. */
export function cpuProfileReport(dir: string, name: string, label: string, summarize: (file: string) => string): string {
  const file = join(dir, `${name}.cpuprofile`);
  return `\n${label} main thread (${file}; markdown report next to it):\n${existsSync(file) ? summarize(file) : "  no profile was written"}`;
}

export class Child {
  /** Lines kept until `ready()`; afterwards they are only counted and passed to `onLine`. */
  readonly lines: LogLine[] = [];
  private waiters: { match: (l: LogLine) => boolean; resolve: (l: LogLine) => void }[] = [];
  private stderr = "";
  private keep = true;
  logLines = 0;
  /** Every line (raw text) once the server is ready; parse only what you need. */
  onLine: ((text: string) => void) | null = null;

  constructor(
    readonly name: string,
    readonly proc: Subprocess<"ignore", "pipe", "pipe">,
  ) {
    void this.pump();
    void (async () => {
      this.stderr = await new Response(proc.stderr).text();
    })();
  }

  static spawn(name: string, args: string[], cwd: string): Child {
    return Child.spawnCommand(name, [process.execPath, ...args], cwd);
  }

  /** A program other than bun itself (the built binary): `command` is its path and arguments. */
  static spawnCommand(name: string, command: string[], cwd: string): Child {
    return new Child(name, Bun.spawn(command, { cwd, stdin: "ignore", stdout: "pipe", stderr: "pipe" }));
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
        this.logLines++;
        if (!this.keep) {
          this.onLine?.(text);
          continue;
        }
        let line: LogLine;
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

  waitFor(match: (l: LogLine) => boolean, timeoutMs = 15_000): Promise<LogLine> {
    const seen = this.lines.find(match);
    if (seen) return Promise.resolve(seen);
    return new Promise((resolve, reject) => {
      const timer = setTimeout(
        () =>
          reject(
            new Error(
              `${this.name}: no matching log line within ${timeoutMs} ms; got:\n${this.lines.map((l) => JSON.stringify(l)).join("\n")}\n${this.stderr}`,
            ),
          ),
        timeoutMs,
      );
      void this.proc.exited.then((code) => {
        clearTimeout(timer);
        reject(
          new Error(
            `${this.name} exited with code ${code} before it was ready:\n${this.lines.map((l) => JSON.stringify(l)).join("\n")}\n${this.stderr}`,
          ),
        );
      });
      this.waiters.push({ match, resolve: (l) => (clearTimeout(timer), resolve(l)) });
    });
  }

  ready() {
    this.keep = false;
    this.lines.length = 0;
  }

  get exited(): boolean {
    return this.proc.exitCode !== null || this.proc.signalCode !== null;
  }

  get stderrText(): string {
    return this.stderr;
  }

  cpuMs(): number {
    return processCpuMs(this.proc.pid);
  }

  /** CPU time of its main thread in ms: the event loop, which one core bounds, where cpuMs() also counts worker threads. */
  mainThreadCpuMs(): number {
    const f = procStat(this.proc.pid, this.proc.pid);
    return f ? ((Number(f[11]) + Number(f[12])) * 1000) / CLK_TCK : 0;
  }

  /** CPU time in ms of its living threads, summed by thread name (comm: "bun", "Worker", "JITWorker", "HeapHelper"...). */
  threadCpuMs(): Map<string, number> {
    const pid = this.proc.pid;
    const out = new Map<string, number>();
    let tids: string[] = [];
    try {
      tids = readdirSync(`/proc/${pid}/task`);
    } catch {
      return out;
    }
    for (const tid of tids) {
      let name = "?";
      try {
        name = readFileSync(`/proc/${pid}/task/${tid}/comm`, "utf8").trim();
      } catch {
        continue;
      }
      // The main thread is named after the executable; say which it is.
      if (tid === String(pid)) name = "main";
      const f = procStat(pid, Number(tid));
      if (f) out.set(name, (out.get(name) ?? 0) + ((Number(f[11]) + Number(f[12])) * 1000) / CLK_TCK);
    }
    return out;
  }

  /**
   * CPU time in ms of its JIT compiler threads (JavaScriptCore names them "JITWorker"):
   * while they still compile, the server is not yet at the speed it runs at for days.
   */
  jitCpuMs(): number {
    const pid = this.proc.pid;
    let ticks = 0;
    let tids: string[] = [];
    try {
      tids = readdirSync(`/proc/${pid}/task`);
    } catch {
      return 0;
    }
    for (const tid of tids) {
      try {
        if (!readFileSync(`/proc/${pid}/task/${tid}/comm`, "utf8").startsWith("JITWorker")) continue;
      } catch {
        continue;
      }
      const f = procStat(pid, Number(tid));
      if (f) ticks += Number(f[11]) + Number(f[12]);
    }
    return (ticks * 1000) / CLK_TCK;
  }

  async stop(): Promise<number | null> {
    if (this.exited) return this.proc.exitCode;
    this.proc.kill("SIGTERM");
    const timeout = new Promise<"timeout">((r) => setTimeout(() => r("timeout"), 10_000).unref());
    if ((await Promise.race([this.proc.exited, timeout])) === "timeout") {
      this.proc.kill("SIGKILL");
      await this.proc.exited;
    }
    return this.proc.exitCode;
  }
}
