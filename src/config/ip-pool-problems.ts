// The rules of [[outbound.ip_pools]] the schema cannot express: pool names used once, an
// outbound account's ip_pool naming a pool, one address per use, an address that can be a
// source at all, a warm-up start that is a real day. Whether the host has each address is
// asked of the system at start (host-addresses.ts).
import ipaddr from "ipaddr.js";
import type { Problem } from "../lib/validation.ts";
import { utcDayStartMs } from "./ip-pools.ts";
import type { RawConfig } from "./schema.ts";

/** Ranges no connection can come from: 0.0.0.0, ::, multicast, broadcast. */
const NOT_A_SOURCE = new Set(["unspecified", "multicast", "broadcast"]);

export function ipPoolProblems(raw: RawConfig): Problem[] {
  const problems: Problem[] = [];
  const pools = raw.outbound.ip_pools;
  const names = new Map<string, number>();
  /** ip → where it was first seen and how it was set there, so every use agrees. */
  const seen = new Map<string, { path: string; same: string }>();
  pools.forEach((pool, i) => {
    const prior = names.get(pool.name);
    if (prior !== undefined)
      problems.push({ path: `outbound.ip_pools[${i}].name`, message: `duplicates the pool at outbound.ip_pools[${prior}]` });
    else names.set(pool.name, i);
    const inPool = new Set<string>();
    pool.addresses.forEach((a, j) => {
      const path = `outbound.ip_pools[${i}].addresses[${j}]`;
      const ip = ipaddr.parse(a.ip).toNormalizedString();
      const range = ipaddr.parse(a.ip).range();
      if (NOT_A_SOURCE.has(range)) {
        problems.push({ path: `${path}.ip`, message: `${a.ip} is ${range}, not one address of this host that connections can come from` });
      }
      if (inPool.has(ip)) problems.push({ path: `${path}.ip`, message: `${a.ip} is listed twice in pool "${pool.name}"` });
      inPool.add(ip);
      const same = JSON.stringify([a.helo.toLowerCase(), a.warmup ?? null]);
      const before = seen.get(ip);
      if (!before) seen.set(ip, { path, same });
      else if (before.same !== same) {
        problems.push({
          path,
          message: `${a.ip} is also in ${before.path} with another helo or warmup: an address greets with one name and warms up once`,
        });
      }
      if (a.warmup) {
        const start = utcDayStartMs(a.warmup.start);
        if (!Number.isFinite(start) || new Date(start).toISOString().slice(0, 10) !== a.warmup.start) {
          problems.push({ path: `${path}.warmup.start`, message: `${a.warmup.start} is not a day of the calendar` });
        }
      }
    });
  });
  raw.accounts.forEach((acc, i) => {
    acc.outbound.forEach((o, k) => {
      if (o.ip_pool === "" || names.has(o.ip_pool)) return;
      const known = [...names.keys()].map((n) => `"${n}"`).join(", ");
      problems.push({
        path: `accounts[${i}].outbound[${k}].ip_pool`,
        message: `names no pool: "${o.ip_pool}" is not the name of an [[outbound.ip_pools]] table (${known ? `known: ${known}` : "none is set"})`,
      });
    });
  });
  return problems;
}
