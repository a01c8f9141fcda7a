// Per-side CPU accounting for the benchmarks: every process of one side (a server, its
// worker threads, the daemons it forks, its milters) in a cgroup of its own, so one
// reading of cpuacct.usage counts all of them, children that have already exited
// included, and nothing else (the load generator and the sink stay outside). cgroup v1's
// cpuacct controller (/sys/fs/cgroup/cpuacct) or v2's cpu.stat usage_usec; where neither
// is writable (not root, a read-only /sys/fs/cgroup), the caller falls back to summing
// /proc/<pid>/stat over the side's process trees (bench/child.ts).
import { existsSync, mkdirSync, readdirSync, readFileSync, rmdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { procStat } from "./child.ts";

const V1_ROOT = "/sys/fs/cgroup/cpuacct";
const V2_ROOT = "/sys/fs/cgroup";

/** `root` and every living descendant of it (by parent pid, read from /proc). */
export function processTree(root: number): number[] {
  const children = new Map<number, number[]>();
  for (const entry of readdirSync("/proc")) {
    const pid = Number(entry);
    if (!Number.isInteger(pid)) continue;
    const f = procStat(pid);
    if (!f) continue;
    const ppid = Number(f[1]);
    children.set(ppid, [...(children.get(ppid) ?? []), pid]);
  }
  const out: number[] = [];
  const visit = (pid: number) => {
    out.push(pid);
    for (const child of children.get(pid) ?? []) visit(child);
  };
  if (procStat(root)) visit(root);
  return out;
}

export class CpuCgroup {
  private constructor(
    readonly dir: string,
    private readonly v2: boolean,
    private readonly root: string,
  ) {}

  /** A new cgroup named `name` (made unique by this process's pid), or null where none can be made. */
  static create(name: string): CpuCgroup | null {
    const leaf = `postroom-bench-${name}-${process.pid}`;
    const v2 = existsSync(join(V2_ROOT, "cgroup.controllers"));
    const root = v2 ? V2_ROOT : V1_ROOT;
    if (!v2 && !existsSync(join(V1_ROOT, "cpuacct.usage"))) return null;
    try {
      const dir = join(root, leaf);
      mkdirSync(dir);
      const group = new CpuCgroup(dir, v2, root);
      group.usageUs(); // readable, or throw
      return group;
    } catch {
      return null;
    }
  }

  /** Moves each process (all its threads) into this cgroup; its children forked later are born in it. Gone processes are skipped. */
  adopt(pids: number[]): void {
    for (const pid of pids) {
      try {
        writeFileSync(join(this.dir, "cgroup.procs"), String(pid));
      } catch {
        // exited meanwhile
      }
    }
  }

  /** CPU time (µs) every process has spent in this cgroup since it was made, exited ones included. */
  usageUs(): number {
    if (this.v2) {
      const line = readFileSync(join(this.dir, "cpu.stat"), "utf8").match(/^usage_usec (\d+)/m);
      return line ? Number(line[1]) : 0;
    }
    return Number(readFileSync(join(this.dir, "cpuacct.usage"), "utf8").trim()) / 1000;
  }

  /** Moves whatever is still in it back to the root cgroup and removes it. */
  remove(): void {
    try {
      for (const pid of readFileSync(join(this.dir, "cgroup.procs"), "utf8").split("\n").filter(Boolean)) {
        try {
          writeFileSync(join(this.root, "cgroup.procs"), pid);
        } catch {
          // exited meanwhile
        }
      }
      rmdirSync(this.dir);
    } catch {
      // already gone, or still busy with an exiting process: harmless
    }
  }
}
