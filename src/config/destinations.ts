// [[outbound.destinations]] read from the file: each rule with its units resolved, and the
// rules the schema cannot check alone (names used once, a pause of at most an hour). What a
// rule does is src/outbound/destinations/rules.ts's.
import type { Problem } from "../lib/validation.ts";
import type { RawConfig } from "./schema.ts";
import { parseDurationMs, parseRate, type RateLimit } from "./units.ts";

/** A rule as the config file (or the built-in list) gives it, its units resolved. */
export interface DestinationRule {
  name: string;
  /** Lowercase MX host names, or suffixes starting with "." (".google.com"). */
  mx: string[];
  /** Connections at once per source IP; null = outbound.domain_concurrency. */
  maxConnections: number | null;
  /** Transactions per source IP, spread evenly; null = no pace. */
  rate: RateLimit | null;
  /** Reply texts (any part, any case) that pause the whole destination. */
  throttleReplies: string[];
  /** The first pause after a throttle reply; doubled while they go on, at most an hour. */
  pauseMs: number;
}

/** The longest a throttle pause grows to by doubling, and the longest `pause` a rule may start with. */
export const MAX_PAUSE_MS = 3_600_000;

type RawRule = RawConfig["outbound"]["destinations"][number];

export const destinationRule = (r: RawRule): DestinationRule => ({
  name: r.name,
  mx: r.mx.map((m) => m.toLowerCase()),
  maxConnections: r.max_connections ?? null,
  rate: parseRate(r.rate) ?? null,
  throttleReplies: r.throttle_replies,
  pauseMs: parseDurationMs(r.pause)!,
});

export function destinationProblems(rules: readonly RawRule[]): Problem[] {
  const problems: Problem[] = [];
  const seen = new Map<string, number>();
  rules.forEach((r, i) => {
    const prior = seen.get(r.name);
    if (prior !== undefined)
      problems.push({ path: `outbound.destinations[${i}].name`, message: `duplicates the name of outbound.destinations[${prior}]` });
    else seen.set(r.name, i);
    const pauseMs = parseDurationMs(r.pause);
    if (pauseMs !== null && pauseMs > MAX_PAUSE_MS)
      problems.push({
        path: `outbound.destinations[${i}].pause`,
        message: `must be at most 1h, not "${r.pause}": a pause doubles up to 1h`,
      });
  });
  return problems;
}
