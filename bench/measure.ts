// What the benchmarks measure with, besides the clock: the machine's busy CPU time, the
// load average, the names a loopback DNS server is asked for, and the median they report.
import { readFileSync } from "node:fs";
import { loadavg } from "node:os";
import type { TestDnsServer } from "../test/helpers/dns-server.ts";
import { CLK_TCK } from "./child.ts";

/** CPU time (ms) all cores have spent busy since boot (not idle, not waiting for I/O). */
export function machineBusyMs(): number {
  const [cpu] = readFileSync("/proc/stat", "utf8").split("\n");
  const f = cpu!.trim().split(/\s+/).slice(1).map(Number);
  const total = f.slice(0, 8).reduce((a, b) => a + b, 0);
  return ((total - f[3]! - f[4]!) * 1000) / CLK_TCK;
}

/** The 1, 5 and 15 minute load averages as printed: "0.52 0.40 0.31". */
export const loadAverage = (): string =>
  loadavg()
    .map((x) => x.toFixed(2))
    .join(" ");

/** name → how often `dns` was asked for it from now on (the caller may clear it between phases). */
export function countQueries(dns: TestDnsServer): Map<string, number> {
  const queries = new Map<string, number>();
  const zoneGet = dns.zone.get.bind(dns.zone);
  dns.zone.get = (name: string) => {
    queries.set(name, (queries.get(name) ?? 0) + 1);
    return zoneGet(name);
  };
  return queries;
}

export const median = (xs: number[]) => {
  const s = [...xs].sort((a, b) => a - b);
  const m = s.length >> 1;
  return s.length % 2 ? s[m]! : (s[m - 1]! + s[m]!) / 2;
};

/** Waits until `check` is true, polling every 20 ms; false after `timeoutMs`. */
export async function until(check: () => boolean, timeoutMs: number): Promise<boolean> {
  const end = Date.now() + timeoutMs;
  while (!check()) {
    if (Date.now() > end) return false;
    await Bun.sleep(20);
  }
  return true;
}

/** How long a run of `count` messages may take to be delivered before it counts as failed: 30 ms each, at least a minute. */
export const runTimeoutMs = (count: number) => Math.max(60_000, count * 30);
