// Each [[outbound.ip_pools]] address must be one of this host's: a pool address the host
// does not have would fail every delivery from it (EADDRNOTAVAIL) long after start, so it
// is a config error instead. Asked by binding a socket to it, not by reading
// os.networkInterfaces(): Linux has all of 127.0.0.0/8 on loopback (127.0.0.2 binds) and
// the kernel may hold addresses (AnyIP routes, a floating IP) that no interface lists.
import { isIP } from "node:net";
import { createServer } from "node:net";
import type { Problem } from "../lib/validation.ts";

/** How long one bind may take before the address is taken to be missing. */
const BIND_TIMEOUT_MS = 2000;

/** Null when a socket can bind to `ip` (an ephemeral port, closed at once), else why not. */
export function bindProblem(ip: string): Promise<string | null> {
  return new Promise((resolve) => {
    const server = createServer();
    const timer = setTimeout(() => {
      server.close();
      resolve("binding to it did not finish");
    }, BIND_TIMEOUT_MS);
    server.once("error", (err: NodeJS.ErrnoException) => {
      clearTimeout(timer);
      resolve(err.code === "EADDRNOTAVAIL" ? "is not an address of this host" : `cannot be bound (${err.code ?? err.message})`);
    });
    server.listen({ host: ip, port: 0, exclusive: true }, () => {
      clearTimeout(timer);
      server.close(() => resolve(null));
    });
  });
}

/** The pool addresses of a raw (not yet validated) config: key path → ip. */
function poolAddresses(raw: unknown): { path: string; ip: string }[] {
  const outbound = (raw as { outbound?: { ip_pools?: unknown } } | null)?.outbound;
  const pools = Array.isArray(outbound?.ip_pools) ? outbound.ip_pools : [];
  return pools.flatMap((pool: unknown, i: number) => {
    const addresses = (pool as { addresses?: unknown } | null)?.addresses;
    if (!Array.isArray(addresses)) return [];
    return addresses.flatMap((a: unknown, j: number) => {
      const ip = (a as { ip?: unknown } | null)?.ip;
      return typeof ip === "string" && isIP(ip) !== 0 ? [{ path: `outbound.ip_pools[${i}].addresses[${j}].ip`, ip }] : [];
    });
  });
}

export async function hostAddressProblems(raw: unknown): Promise<Problem[]> {
  const found = await Promise.all(
    poolAddresses(raw).map(async ({ path, ip }) => {
      const why = await bindProblem(ip);
      return why ? { path, message: `${ip} ${why}: add it to an interface, or take it out of the pool` } : null;
    }),
  );
  return found.filter((p): p is Problem => p !== null);
}
