// How a target's answer is logged (docs/operations.md, Log lines): each outcome named by what
// happened to the message, at the level an operator should look at it, and an unreachable
// target's reason said once, with the URL that was called (never its credentials or query).
import type { TargetVerdict } from "./target-reply.ts";

export interface OutcomeLine {
  msg: "inbound posted" | "inbound refused by target" | "inbound deferred";
  level: "info" | "warn";
}

/**
 * 2xx: posted. 4xx: the target refused it, on purpose (the sender gets a 5xx): info. 5xx,
 * timeout, unreachable or a local failure: the sender will retry, and the operator may
 * have something to fix: warn.
 */
export function outcomeLine(verdict: Pick<TargetVerdict, "category">): OutcomeLine {
  switch (verdict.category) {
    case "successful":
      return { msg: "inbound posted", level: "info" };
    case "rejected":
      return { msg: "inbound refused by target", level: "info" };
    case "delayed":
      return { msg: "inbound deferred", level: "warn" };
  }
}

/** The URL as the log and the incoming status show it: scheme, host, port and path only. */
export function shownUrl(url: string): string {
  if (!URL.canParse(url)) return "(a target that is not a URL)";
  const u = new URL(url);
  return `${u.protocol}//${u.host}${u.pathname}`;
}

// Bun's connection errors end with a question for the user that says nothing more.
const BUN_QUESTION = /\.? Is the computer able to access the url\?$/;

/**
 * Why a POST found no target: the error's code once (Bun's messages already start with it:
 * "ECONNREFUSED: Unable to connect..."), then the URL. `allowKey` names the key that would
 * allow a private address the egress guard refused.
 */
export function unreachableReason(err: { code?: unknown; message?: unknown }, url: string, allowKey: string | null = null): string {
  const code = typeof err.code === "string" && err.code !== "" ? err.code : null;
  const message = typeof err.message === "string" ? err.message.replace(BUN_QUESTION, "").trim() : "";
  const text = code && !message.includes(code) ? (message ? `${code}: ${message}` : code) : message || "connection failed";
  const fix = allowKey ? `; ${allowKey} = true allows it (tests and loopback setups only)` : "";
  return `${text} (POST ${shownUrl(url)})${fix}`;
}
