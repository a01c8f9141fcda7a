// Pure decisions about a sending domain's DNS (table-tested): does a TXT record carry our
// key, does a CNAME point where it must, and what a check's result means for sending.
import type { CheckName } from "./sending-domain.ts";

export interface Verdict {
  ok: boolean;
  /** Why not, in words a person can act on; null when ok. */
  reason: string | null;
}

const pass: Verdict = { ok: true, reason: null };
const fail = (reason: string): Verdict => ({ ok: false, reason });

/** DKIM tags of a record ("v=DKIM1; k=rsa; p=..."), names lower-cased, values unspaced. */
export function dkimTags(record: string): Map<string, string> {
  const tags = new Map<string, string>();
  for (const part of record.split(";")) {
    const eq = part.indexOf("=");
    if (eq < 0) continue;
    tags.set(part.slice(0, eq).trim().toLowerCase(), part.slice(eq + 1).replace(/\s+/g, ""));
  }
  return tags;
}

/** Whether one of the TXT records at `host` (strings of a record joined) carries `publicKey`. */
export function dkimRecordVerdict(host: string, records: readonly (readonly string[])[], publicKey: string): Verdict {
  const keys = records.map((r) => dkimTags(r.join(""))).filter((t) => t.has("p"));
  if (keys.length === 0)
    return fail(records.length === 0 ? `no TXT record at ${host}` : `the TXT record at ${host} is not a DKIM key record (no p=)`);
  if (keys.some((t) => t.get("p") === publicKey)) return pass;
  if (keys.every((t) => t.get("p") === "")) return fail(`the DKIM key at ${host} is revoked (empty p=)`);
  return fail(`TXT at ${host} has a different key`);
}

const bare = (name: string) => name.toLowerCase().replace(/\.$/, "");

export function cnameVerdict(host: string, targets: readonly string[], required: string): Verdict {
  if (targets.length === 0) return fail(`no CNAME at ${host}; it must point at ${required}`);
  if (targets.some((t) => bare(t) === bare(required))) return pass;
  return fail(`the CNAME at ${host} points at ${bare(targets[0]!)}, not ${required}`);
}

/** SPF results per sending address → one verdict: every address must pass. */
export function spfVerdict(host: string, results: readonly { ip: string; result: string }[]): Verdict {
  // Said in words, not left as a bare `false`: with no addresses there is nothing SPF could
  // authorise, no SPF record is offered, and only the operator can fix it.
  if (results.length === 0)
    return fail(
      "outbound.sending_ips is empty: the operator has not set the addresses mail leaves from, so no SPF record is offered and SPF cannot be checked",
    );
  const failing = results.filter((r) => r.result !== "pass");
  if (failing.length === 0) return pass;
  return fail(`the SPF policy reached at ${host} does not authorise ${failing.map((r) => `${r.ip} (${r.result})`).join(", ")}`);
}

export interface DomainState {
  verifiedAtMs: number | null;
  failingSinceMs: number | null;
}

export interface Schedule {
  /** How often an unverified domain is looked at again. */
  unverifiedMs: number;
  verifiedMs: number;
  graceMs: number;
  /** 0..1, spread of the next check so domains do not all fall due together. */
  jitter: number;
}

export const REQUIRED_CHECKS: readonly CheckName[] = ["dkim", "return_path", "spf"];

export type SendingStatus = "verified" | "grace" | "unverified";

/** Mail may go out from a verified domain, and for a grace period after its records fail. */
export function sendingStatus(s: DomainState, nowMs: number, graceMs: number): SendingStatus {
  if (s.verifiedAtMs === null) return "unverified";
  if (s.failingSinceMs === null) return "verified";
  return nowMs < s.failingSinceMs + graceMs ? "grace" : "unverified";
}

export interface NextState extends DomainState {
  nextCheckAtMs: number;
  events: { kind: "verified" | "failing" | "verification_lost" | "recovered"; details: Record<string, unknown> }[];
}

/** What a check's result changes: verification, the grace period, the next check, events. */
export function nextState(
  prev: DomainState,
  checks: Record<CheckName, boolean>,
  reasons: Record<string, string>,
  nowMs: number,
  schedule: Schedule,
  random = Math.random,
): NextState {
  const allPass = REQUIRED_CHECKS.every((c) => checks[c]);
  const spread = (ms: number) => Math.round(ms * (1 + schedule.jitter * (2 * random() - 1)));
  const events: NextState["events"] = [];
  let { verifiedAtMs, failingSinceMs } = prev;
  if (allPass) {
    if (verifiedAtMs === null) events.push({ kind: "verified", details: {} });
    else if (failingSinceMs !== null) events.push({ kind: "recovered", details: { failing_since: failingSinceMs } });
    verifiedAtMs ??= nowMs;
    failingSinceMs = null;
  } else if (verifiedAtMs !== null) {
    if (failingSinceMs === null) {
      failingSinceMs = nowMs;
      events.push({ kind: "failing", details: { reasons, grace_until: nowMs + schedule.graceMs } });
    } else if (nowMs >= failingSinceMs + schedule.graceMs) {
      events.push({ kind: "verification_lost", details: { reasons, failing_since: failingSinceMs } });
      verifiedAtMs = null;
      failingSinceMs = null;
    }
  }
  const healthy = verifiedAtMs !== null && failingSinceMs === null;
  return { verifiedAtMs, failingSinceMs, nextCheckAtMs: nowMs + spread(healthy ? schedule.verifiedMs : schedule.unverifiedMs), events };
}
