// Destinations (issue 29): which recipient domains share one window, one pace and one pause.
// A domain belongs to the first [[outbound.destinations]] rule (the file's, then the
// built-in ones, builtin.ts) that names one of its MX hosts, by host name or by a suffix
// starting with "."; a domain no rule takes shares its window with every domain whose MX
// hosts are the same set. Pure, with table tests (test/outbound/destinations/rules.test.ts).
import { type DestinationRule, MAX_PAUSE_MS } from "../../config/destinations.ts";

export type { DestinationRule };
export { MAX_PAUSE_MS };

/** The source part of a lane when no pool binds an address (lanes.ts: a pool's lane is its addresses). */
export const DEFAULT_SOURCE_IP = "default";

/** What a recipient domain resolved to. */
export interface ResolvedDestination {
  /**
   * The rule's name, else the recipient's domain (API.md section 10): what the queue's
   * rows, the operator API and pauses name.
   */
  name: string;
  /** Whose window and pace the domain shares: the rule's, or its MX host set's. */
  windowKey: string;
  rule: DestinationRule | null;
}

/** Pure: whether `host` is `pattern` (a host name) or lies under it (a ".suffix"). */
export function mxMatches(host: string, pattern: string): boolean {
  const h = host.toLowerCase().replace(/\.$/, "");
  const p = pattern.toLowerCase();
  return p.startsWith(".") ? h.endsWith(p) && h.length > p.length : h === p;
}

/** Pure: the key of a set of MX hosts, the same whatever their order (equal preferences come shuffled). */
export const mxSetKey = (hosts: readonly string[]): string =>
  `mx ${[...new Set(hosts.map((h) => h.toLowerCase().replace(/\.$/, "")))].sort().join(",")}`;

/**
 * Pure: the destination of `domain` given its MX hosts (null when they are not known: the
 * lookup failed, or mail goes through a smarthost) and the rules in force, first match wins.
 */
export function resolveDestination(
  domain: string,
  mxHosts: readonly string[] | null,
  rules: readonly DestinationRule[],
): ResolvedDestination {
  const d = domain.toLowerCase();
  if (mxHosts && mxHosts.length > 0) {
    for (const rule of rules) {
      if (mxHosts.some((host) => rule.mx.some((p) => mxMatches(host, p)))) return { name: rule.name, windowKey: `rule ${rule.name}`, rule };
    }
    return { name: d, windowKey: mxSetKey(mxHosts), rule: null };
  }
  return { name: d, windowKey: `domain ${d}`, rule: null };
}

/** Pure: the file's rules first, then each built-in one whose name the file does not use (a file rule replaces it). */
export function effectiveRules(fileRules: readonly DestinationRule[], builtIn: readonly DestinationRule[]): DestinationRule[] {
  const named = new Set(fileRules.map((r) => r.name));
  return [...fileRules, ...builtIn.filter((r) => !named.has(r.name))];
}

/** Pure: whether an SMTP reply is one of the rule's throttle replies (any part of the code and text, any case). */
export function isThrottleReply(rule: DestinationRule | null, code: number | null, response: string): boolean {
  if (code === null || code < 400 || code >= 500) return false;
  return isThrottleText(rule, `${code} ${response}`);
}

/**
 * Pure: whether a text holds one of the rule's throttle replies: a transaction's reply, or
 * why no connection could be had (a 421 greeting, as Microsoft's RP-002, is in it).
 */
export function isThrottleText(rule: DestinationRule | null, text: string): boolean {
  if (!rule) return false;
  const t = text.toLowerCase();
  return rule.throttleReplies.some((r) => r !== "" && t.includes(r.toLowerCase()));
}

/** A destination's pause as the store keeps it. */
export interface DestinationPause {
  destination: string;
  source: "throttle" | "operator";
  /** The throttle reply, or the operator token's name. */
  reason: string;
  pausedAtMs: number;
  /** When a throttle pause ends; null: an operator's, until resumed. */
  untilMs: number | null;
  /** The length of the last throttle pause (doubled by the next one while they go on). */
  pauseMs: number;
}

/** Pure: whether a pause holds at `nowMs`. */
export const pauseHolds = (p: DestinationPause | undefined | null, nowMs: number): boolean =>
  p !== undefined && p !== null && (p.untilMs === null || p.untilMs > nowMs);

/**
 * Pure: the pause a throttle reply starts, or null when the destination is paused already
 * (replies of connections already under way do not stretch it). A throttle within one pause
 * length of the last one's end is the throttling going on: the pause doubles, up to
 * MAX_PAUSE_MS; later, it starts again from `basePauseMs`.
 */
export function throttlePause(
  prior: DestinationPause | null,
  basePauseMs: number,
  nowMs: number,
): { untilMs: number; pauseMs: number } | null {
  if (prior && pauseHolds(prior, nowMs)) return null;
  const goesOn = prior !== null && prior.source === "throttle" && prior.untilMs !== null && nowMs - prior.untilMs < prior.pauseMs;
  const pauseMs = Math.min(MAX_PAUSE_MS, goesOn ? prior.pauseMs * 2 : basePauseMs);
  return { untilMs: nowMs + pauseMs, pauseMs };
}
