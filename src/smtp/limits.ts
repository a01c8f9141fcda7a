// The limits every SMTP session is held to, as pure decisions (the glue that applies them
// to smtp-server's connections is guard.ts). Each answers with the reply the client
// gets, or null to let it go on. In the spirit of Postfix's smtpd: a connection count per
// client (smtpd_client_connection_count_limit), junk commands (smtpd_junk_command_limit),
// a minimum data rate (smtpd_min_data_rate), plus a hard cap on a session's length and,
// on submission, on the time before AUTH.
import { isIPv6 } from "node:net";
import { SMTP_REPLIES } from "./replies.ts";
import type { SmtpReply } from "./reply.ts";

/** The [smtp] limits as the guard reads them (from the current config, per session). */
export interface SessionLimits {
  maxConnectionsPerIp: number;
  maxJunkCommands: number;
  maxSessionMs: number;
  /** Bytes per second during DATA; 0 = no minimum. */
  minDataRate: number;
  dataRateWindowMs: number;
  /** Submission only: the time a session may go without a successful AUTH; null = no limit (inbound). */
  authTimeoutMs: number | null;
}

/** Renders a duration in the config's own units for replies ("10m", "60s", "1500ms"). */
export function durationText(ms: number): string {
  if (ms % 3_600_000 === 0) return `${ms / 3_600_000}h`;
  if (ms % 60_000 === 0) return `${ms / 60_000}m`;
  if (ms % 1000 === 0) return `${ms / 1000}s`;
  return `${ms}ms`;
}

/**
 * Who a connection counts against: an IPv4 address itself, an IPv6 address by its /64
 * (one subscriber's usual allocation; counting single IPv6 addresses would let one host
 * open as many connections as it has addresses). Addresses smtp-server reports are
 * already normalised (an IPv4-mapped IPv6 address arrives as plain IPv4).
 */
export function clientKey(address: string): string {
  const ip = address.replace(/^::ffff:(?=\d+\.\d+\.\d+\.\d+$)/i, "").toLowerCase();
  if (!isIPv6(ip)) return ip;
  const [head = "", tail = ""] = ip.split("::", 2);
  const headGroups = head ? head.split(":") : [];
  const tailGroups = ip.includes("::") ? (tail ? tail.split(":") : []) : [];
  // An embedded IPv4 tail (::1.2.3.4) stands for two groups; the /64 never reaches it.
  const tailLength = tailGroups.reduce((n, g) => n + (g.includes(".") ? 2 : 1), 0);
  const groups = ip.includes("::")
    ? [...headGroups, ...Array<string>(Math.max(0, 8 - headGroups.length - tailLength)).fill("0"), ...tailGroups]
    : headGroups;
  return `${groups
    .slice(0, 4)
    .map((g) => (g.includes(".") ? "0" : g.replace(/^0+(?=.)/, "")))
    .join(":")}::/64`;
}

/**
 * A new connection, given the keys of every open connection of the listener (this one
 * included) and its own key: accepted (null) while its client holds at most `limit`.
 */
export function connectionVerdict(openKeys: Iterable<string>, key: string, limit: number): SmtpReply | null {
  let count = 0;
  for (const k of openKeys) if (k === key && ++count > limit) return SMTP_REPLIES.tooManyConnections;
  return null;
}

/**
 * Commands that move no mail forward; Postfix counts NOOP, VRFY, ETRN and RSET. HELO and
 * EHLO are here too: a session needs one or two (again after STARTTLS), and each is a reset.
 */
export const JUNK_COMMANDS: ReadonlySet<string> = new Set(["NOOP", "RSET", "VRFY", "EXPN", "HELP", "ETRN", "HELO", "EHLO"]);

/**
 * One command of a session that has sent `junkSoFar` junk commands since its last
 * message: the new count, and 421 once it passes `limit`.
 */
export function commandVerdict(junkSoFar: number, command: string, limit: number): { junk: number; refusal: SmtpReply | null } {
  if (!JUNK_COMMANDS.has(command.toUpperCase())) return { junk: junkSoFar, refusal: null };
  const junk = junkSoFar + 1;
  return { junk, refusal: junk > limit ? SMTP_REPLIES.tooManyJunkCommands : null };
}

/**
 * At the end of a window of DATA: `bytes` arrived in `elapsedMs`. Too slow (421, and the
 * message is not accepted) when that is under `minRate` bytes per second.
 */
export function dataRateVerdict(bytes: number, elapsedMs: number, minRate: number): SmtpReply | null {
  if (minRate <= 0 || elapsedMs <= 0) return null;
  if (bytes * 1000 >= minRate * elapsedMs) return null;
  return SMTP_REPLIES.dataTooSlow(minRate);
}

export type DeadlineAction = "close" | "wait";

/**
 * A session deadline (its length, or the time to authenticate) has passed. When the
 * client waits for us (a command's handler, or the decision on a message it has sent in
 * full), we owe it a reply first: wait for it, then close. Otherwise close now, even in
 * the middle of a command line or a message.
 */
export function deadlineAction(waitingForServer: boolean): DeadlineAction {
  return waitingForServer ? "wait" : "close";
}

export const sessionTimeReply = (maxSessionMs: number): SmtpReply => SMTP_REPLIES.sessionTimeLimit(durationText(maxSessionMs));

export const authTimeReply = (authTimeoutMs: number): SmtpReply => SMTP_REPLIES.authTimeLimit(durationText(authTimeoutMs));

/**
 * AUTH on submission (RFC 4954: no plaintext password mechanism without TLS). Allowed
 * over TLS, or in clear when allow_insecure_auth says so. Otherwise 538: STARTTLS first
 * when the listener offers it, or encryption required when it cannot (no certificate).
 */
export function authVerdict(s: { secure: boolean; starttlsOffered: boolean; allowInsecureAuth: boolean }): SmtpReply | null {
  if (s.secure || s.allowInsecureAuth) return null;
  if (s.starttlsOffered) return SMTP_REPLIES.starttlsFirst;
  return SMTP_REPLIES.encryptionRequired;
}
