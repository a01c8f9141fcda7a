// bench:inbound's options (bench/inbound.ts's header says what each one does) and their
// checks: flags, else BENCH_* variables, else the defaults.
import { availableParallelism } from "node:os";
import { spareCoreWorkers } from "../src/lib/worker-pool.ts";
import { dirOption, intOption, parseOptions } from "./args.ts";
import { DNS_KINDS, type DnsKind } from "./sender-dns.ts";
import { MAX_DOMAINS } from "./signed-senders.ts";

export type InboundOptions = ReturnType<typeof inboundOptions>;

/**
 * Sender domains by default: 12,000 for each of Postroom's parse workers (inbound.parse_workers
 * = "auto", src/lib/worker-pool.ts), at least one: 12,000 on 2 cores. Each worker keeps
 * caches of its own (DNS answers, SPF and DMARC verdicts, 10,000 entries each) and gets
 * about 1/W of the messages, so a domain comes back to a worker after about 12,000 others:
 * past its caches, and every message costs its three lookups (with 12,000 domains and 2
 * workers, half the lookups came from the caches).
 */
function defaultDomains(): number {
  return 12_000 * Math.max(1, spareCoreWorkers(availableParallelism()));
}

export function inboundOptions() {
  const values = parseOptions(
    "bun run bench:inbound [--messages N] [--connections C] [--warmup W] [--rounds R] [--domains D] [--dns unbound|js] [--bare-auth on|off] [--profile DIR] [--base DIR]",
    {
      messages: { type: "string", short: "n" },
      connections: { type: "string", short: "c" },
      warmup: { type: "string" },
      rounds: { type: "string" },
      domains: { type: "string" },
      profile: { type: "string" },
      dns: { type: "string" },
      "bare-auth": { type: "string" },
      base: { type: "string" },
    },
  );
  const messages = intOption(values.messages, "BENCH_MESSAGES", 4000, 1);
  const connections = intOption(values.connections, "BENCH_CONNECTIONS", 8, 1);
  const warmup = intOption(values.warmup, "BENCH_WARMUP", 2000, 0);
  const rounds = intOption(values.rounds, "BENCH_ROUNDS", 5, 1);
  const domains = intOption(values.domains, "BENCH_DOMAINS", defaultDomains(), 1);
  if (connections > messages) throw new Error(`--connections (${connections}) must not exceed --messages (${messages})`);
  if (domains > MAX_DOMAINS) throw new Error(`--domains must be at most ${MAX_DOMAINS}, got ${domains}`);
  const dns = (values.dns ?? process.env.BENCH_DNS ?? "unbound") as DnsKind;
  if (!DNS_KINDS.includes(dns)) throw new Error(`--dns must be one of ${DNS_KINDS.join(", ")}, got ${dns}`);
  const bareAuth = values["bare-auth"] ?? process.env.BENCH_BARE_AUTH ?? "on";
  if (bareAuth !== "on" && bareAuth !== "off") throw new Error(`--bare-auth must be on or off, got ${bareAuth}`);
  return {
    messages,
    connections,
    warmup,
    rounds,
    domains,
    dns,
    bareAuth: bareAuth === "on",
    profileDir: dirOption(values.profile, "BENCH_PROFILE"),
    baseDir: dirOption(values.base, "BENCH_BASE"),
  };
}
