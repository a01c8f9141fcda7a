// Human units in the config file ("30s", "25MB", "5/min", "0.0.0.0:25") parsed to
// numbers whose names carry the unit. Each parser returns null on bad input so the
// loader can report every problem with its key path instead of stopping at the first.

const DURATION_UNIT_MS: Record<string, number> = {
  ms: 1,
  s: 1000,
  m: 60_000,
  min: 60_000,
  h: 3_600_000,
  d: 86_400_000,
};

export const DURATION_PATTERN = "^\\s*\\d+(\\.\\d+)?\\s*(ms|s|m|min|h|d)\\s*$";

/** "30s" → 30000. Units: ms, s, m|min, h, d. */
export function parseDurationMs(text: string): number | null {
  const m = /^\s*(\d+(?:\.\d+)?)\s*(ms|s|m|min|h|d)\s*$/.exec(text);
  if (!m) return null;
  return Math.round(Number(m[1]) * DURATION_UNIT_MS[m[2]!]!);
}

// Mail software quotes sizes in binary units ("25MB" means 25 MiB, as Gmail and Postfix
// users expect), so KB/MB/GB are powers of 1024; KiB/MiB/GiB are accepted as synonyms.
const SIZE_UNIT_BYTES: Record<string, number> = {
  b: 1,
  kb: 1024,
  kib: 1024,
  mb: 1024 ** 2,
  mib: 1024 ** 2,
  gb: 1024 ** 3,
  gib: 1024 ** 3,
};

/** A share of a budget: a percentage (0% to 100%) or a size. */
export const SHARE_PATTERN = "^\\s*((100(\\.0+)?|\\d{1,2}(\\.\\d+)?)\\s*%|\\d+(\\.\\d+)?\\s*([bB]|[kKmMgG][iI]?[bB]))\\s*$";
export const SIZE_PATTERN = "^\\s*\\d+(\\.\\d+)?\\s*([bB]|[kKmMgG][iI]?[bB])\\s*$";

/** "25MB" → 26214400. */
export function parseSizeBytes(text: string): number | null {
  const m = /^\s*(\d+(?:\.\d+)?)\s*([a-zA-Z]+)\s*$/.exec(text);
  if (!m) return null;
  const unit = SIZE_UNIT_BYTES[m[2]!.toLowerCase()];
  if (unit === undefined) return null;
  return Math.floor(Number(m[1]) * unit);
}

export interface RateLimit {
  limit: number;
  windowMs: number;
}

const RATE_WINDOW_MS: Record<string, number> = { s: 1000, sec: 1000, m: 60_000, min: 60_000, h: 3_600_000, hour: 3_600_000 };

export const RATE_PATTERN = "^\\s*(off|\\d+\\s*/\\s*(s|sec|m|min|h|hour))\\s*$";

/** "5/min" → {limit: 5, windowMs: 60000}; "off" → null (no limit). undefined on bad input. */
export function parseRate(text: string): RateLimit | null | undefined {
  const t = text.trim();
  if (t === "off") return null;
  const m = /^(\d+)\s*\/\s*(s|sec|m|min|h|hour)$/.exec(t);
  if (!m) return undefined;
  const limit = Number(m[1]);
  if (limit < 1) return undefined;
  return { limit, windowMs: RATE_WINDOW_MS[m[2]!]! };
}

export interface ListenAddress {
  host: string;
  port: number;
}

/** "0.0.0.0:25", "[::1]:8080", "localhost:0" → host and port. Port 0 asks for any free port. */
export function parseListen(text: string): ListenAddress | null {
  const m = /^(?:\[([0-9a-fA-F:.]+)\]|([^:\s[\]]+)):(\d{1,5})$/.exec(text.trim());
  if (!m) return null;
  const port = Number(m[3]);
  if (port > 65535) return null;
  return { host: m[1] ?? m[2]!, port };
}

export const formatListen = (a: ListenAddress): string => (a.host.includes(":") ? `[${a.host}]:${a.port}` : `${a.host}:${a.port}`);

const WINDOW_NAMES: [number, string][] = [
  [1000, "second"],
  [60_000, "minute"],
  [3_600_000, "hour"],
];

/** `5 calls per minute`, `600 calls per 2 hours`: as the config's `"N/min"` reads. */
export function rateText(rate: RateLimit): string {
  const calls = `${rate.limit} ${rate.limit === 1 ? "call" : "calls"}`;
  for (const [ms, name] of WINDOW_NAMES.toReversed()) {
    if (rate.windowMs % ms !== 0) continue;
    const n = rate.windowMs / ms;
    return `${calls} per ${n === 1 ? name : `${n} ${name}s`}`;
  }
  return `${calls} per ${rate.windowMs} ms`;
}
